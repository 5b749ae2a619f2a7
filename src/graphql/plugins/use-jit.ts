import type { DocumentNode, ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { selectsAbstractType } from '../prepared-operation.js';
/**
 * /graphql's execution compiled by graphql-jit, once per (parsed document, operation name) for as long as
 * yoga's parser cache keeps the document; it replaces the execute function, so no plugin may wrap execution.
 */
export function jitPlugin(): Plugin {
  const cache = new WeakMap<DocumentNode, Map<string, CompiledQuery | null>>();
  return {
    onExecute({ args, setExecuteFn }) {
      let byName = cache.get(args.document);
      if (!byName) cache.set(args.document, (byName = new Map()));
      const name = args.operationName ?? '';
      let compiled = byName.get(name);
      if (compiled === undefined) {
        const result = selectsAbstractType(args.schema, args.document) ? null
          : compileQuery(args.schema, args.document, args.operationName ?? undefined);
        compiled = result && isCompiledQuery(result) ? result : null;
        byName.set(name, compiled);
      }
      if (compiled) {
        const query = compiled;
        setExecuteFn((a) => query.query(a.rootValue, a.contextValue, (a.variableValues ?? {}) as Record<string, unknown>) as
          Promise<ExecutionResult> | ExecutionResult);
      }
    },
  };
}

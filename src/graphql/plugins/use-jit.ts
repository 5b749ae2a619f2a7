import type { DocumentNode, ExecutionResult } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import type { Plugin } from 'graphql-yoga';
import { selectsAbstractType } from '../prepared-operation.js';
/**
 * /graphql's execution compiled by graphql-jit: one compiled query per (parsed document, operation name),
 * held as long as the document is (yoga's parser cache hands out one document object per query text and
 * bounds how many there are). Documents with abstract types, or that graphql-jit cannot compile, run on
 * graphql-js unchanged.
 *
 * It replaces the execute function (setExecuteFn), so a plugin before it that wraps execution would be
 * bypassed: none of the gateway's does.
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

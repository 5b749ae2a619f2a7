import {
  execute, getNamedType, isAbstractType, parse, TypeInfo, validate, visit, visitWithTypeInfo, type DocumentNode, type ExecutionResult,
  type GraphQLError, type GraphQLSchema,
} from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import type { Context } from './context.js';
import { maskError } from './errors.js';
import { schema } from './schema.js';

// The operations the JSON-RPC layer runs in-process (prepareOperation), compiled once by graphql-jit.
// Documents that select a union or interface stay on graphql-js: graphql-jit calls resolveType without
// `info.schema`, which Pothos' type resolution needs.

const abstractMemo = new WeakMap<DocumentNode, boolean>();

/** Whether any field the document selects has a union or interface type. Memoised per document. */
export function selectsAbstractType(schema: GraphQLSchema, document: DocumentNode): boolean {
  let found = abstractMemo.get(document);
  if (found !== undefined) return found;
  found = false;
  const typeInfo = new TypeInfo(schema);
  visit(document, visitWithTypeInfo(typeInfo, {
    Field() {
      const type = typeInfo.getType();
      if (type && isAbstractType(getNamedType(type))) found = true;
    },
  }));
  abstractMemo.set(document, found);
  return found;
}

export type Executor = (variables: Record<string, unknown>, context: unknown) => Promise<ExecutionResult> | ExecutionResult;

/** The executor of a fixed, validated document: compiled when graphql-jit can, graphql-js otherwise. */
function compileOperation(schema: GraphQLSchema, document: DocumentNode): Executor {
  const compiled = selectsAbstractType(schema, document) ? null : compileQuery(schema, document);
  if (compiled && isCompiledQuery(compiled)) {
    return (variables, context) => compiled.query(undefined, context, variables) as Promise<ExecutionResult> | ExecutionResult;
  }
  return (variables, context) => execute({ schema, document, variableValues: variables, contextValue: context });
}

/**
 * A GraphQL document parsed and validated once (at start-up) and then executed in-process against the
 * same schema and per-request context as /graphql: no HTTP hop, same loaders. Errors come back masked
 * exactly as the GraphQL endpoint would show them; the originals of masked ones go to `onMasked`.
 */
export function prepareOperation(source: string, onMasked?: (error: GraphQLError) => void) {
  const document: DocumentNode = parse(source);
  const problems = validate(schema, document);
  if (problems.length > 0) throw new Error(`invalid operation document: ${problems.map((p) => p.message).join('; ')}`);
  // compiled once (graphql-jit) where it can be
  const exec = compileOperation(schema, document);
  return async function run<T>(variables: Record<string, unknown>, context: Context): Promise<ExecutionResult<T>> {
    // each operation has its own result budget (the operations of a JSON-RPC batch share the context)
    const budget = context.budget.fresh();
    const result = (await exec(variables, { ...context, budget })) as ExecutionResult<T>;
    if (budget.exceeded) return { errors: [budget.exceeded] };
    if (!result.errors?.length) return result;
    return {
      ...result,
      errors: result.errors.map((e) => {
        const masked = maskError(e, 'Unexpected error.') as GraphQLError;
        // what yoga logs on /graphql: every error it masks (logFailure decides the level)
        if (masked !== e) onMasked?.(e);
        return masked;
      }),
    };
  };
}

import { GraphQLError, parse, validate, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Context } from './context.js';
import { maskError } from './errors.js';
import { compileOperation } from './jit.js';
import { schema } from './schema.js';

/**
 * A GraphQL document parsed and validated once (at start-up) and then executed in-process against the
 * same schema and per-request context as /graphql: no HTTP hop, same loaders. Errors come back masked
 * exactly as the GraphQL endpoint would show them; the originals of masked ones go to `onMasked`.
 */
export function prepareOperation(source: string, onMasked?: (error: GraphQLError) => void) {
  const document: DocumentNode = parse(source);
  const problems = validate(schema, document);
  if (problems.length > 0) throw new Error(`invalid operation document: ${problems.map((p) => p.message).join('; ')}`);
  // compiled once (graphql-jit) where it can be: src/graphql/jit.ts
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

export type PreparedOperation = ReturnType<typeof prepareOperation>;

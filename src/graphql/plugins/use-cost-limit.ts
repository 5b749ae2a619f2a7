import { complexityFromQuery } from '@pothos/plugin-complexity';
import { GraphQLError, Kind, type DefinitionNode, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { clientError } from '../errors.js';

// The cost limit, checked when the operation is about to run: only then are the variables known, and a
// page size sent as `first: $n` counts what it will fetch. The cost of every field is declared on the
// schema (@pothos/plugin-complexity; src/graphql/builder.ts and the list fields): 1 per field, and a
// list's selection counted once per item it may hold (a connection's effective page size: first/last or
// DEFAULT_PAGE_SIZE, clamped to MAX_PAGE_SIZE), so nested lists multiply. Fragments and inline fragments
// count; @include/@skip are ignored (a skipped field still counts).

/** The rejection: same code as the other document limits, naming the cost found and the limit. */
const costRejection = (cost: number, maxCost: number) =>
  clientError(
    `Query Cost limit of ${maxCost} exceeded, found ${cost} (GRAPHQL_MAX_COST; page sizes of nested lists multiply: ask for smaller pages)`,
    { extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
  );

// complexityFromQuery measures a document's first operation: each (document, operation name) gets a view
// with the operation to run first and every fragment, made once per document yoga's parser cache holds
const views = new WeakMap<DocumentNode, Map<string, DocumentNode | null>>();

function operationView(document: DocumentNode, operationName: string | null | undefined): DocumentNode | null {
  let byName = views.get(document);
  if (!byName) views.set(document, (byName = new Map()));
  const key = operationName ?? '';
  let view = byName.get(key);
  if (view === undefined) {
    const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
    const operation = operationName ? operations.find((o) => o.name?.value === operationName)
      : operations.length === 1 ? operations[0] : undefined;
    const fragments: DefinitionNode[] = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION);
    // no such operation: execution answers that as usual
    view = operation ? { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] } : null;
    byName.set(key, view);
  }
  return view;
}

// Costs memoised per operation view and variables, so a repeated request does not walk its document again;
// bounded by `costsPerView` entries per view and `maxKeyLength` characters of variables.
const costs = new WeakMap<DocumentNode, Map<string, number | null>>();
const costsPerView = 256;
const maxKeyLength = 2_048;

function costKey(variables: unknown, paging: unknown): string | null {
  let key: string | undefined;
  try {
    key = JSON.stringify([paging, variables ?? {}]);
  } catch {
    return null; // not JSON (a BigInt, a cycle): computed each time
  }
  return key !== undefined && key.length <= maxKeyLength ? key : null;
}

/** The cost of the operation to run with these variables; null when they do not coerce. */
function operationCost(
  args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: unknown; contextValue: unknown },
): number | null {
  const view = operationView(args.document, args.operationName);
  if (!view) return null;
  const key = costKey(args.variableValues, (args.contextValue as { paging?: unknown } | null)?.paging);
  let memo = costs.get(view);
  if (key !== null && memo?.has(key)) return memo.get(key)!;
  const cost = computeCost(view, args);
  if (key !== null) {
    if (!memo) costs.set(view, (memo = new Map()));
    else if (memo.size >= costsPerView) memo.clear();
    memo.set(key, cost);
  }
  return cost;
}

function computeCost(view: DocumentNode, args: { schema: GraphQLSchema; variableValues?: unknown; contextValue: unknown }): number | null {
  try {
    return complexityFromQuery(view, {
      schema: args.schema,
      ctx: args.contextValue as object,
      variables: (args.variableValues ?? {}) as Record<string, unknown>,
    }).complexity;
  } catch (error) {
    // variables that do not coerce: execution reports them (BAD_USER_INPUT) exactly as without this check
    if (error instanceof GraphQLError) return null;
    throw error;
  }
}

/** An API key's own cost limit (`maxCost` in the context: src/graphql/plugins/use-key-overrides.ts), else the gateway's. */
const limitOf = (context: unknown, maxCost: number) => (context as { maxCost?: number } | null)?.maxCost ?? maxCost;

export function costLimitPlugin(maxCost: number): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const cost = operationCost(args);
      const limit = limitOf(args.contextValue, maxCost);
      if (cost !== null && cost > limit) setResultAndStopExecution({ errors: [costRejection(cost, limit)] });
    },
    // a subscription: the cost of one event's selection
    onSubscribe({ args, setResultAndStopExecution }) {
      const cost = operationCost(args);
      const limit = limitOf(args.contextValue, maxCost);
      if (cost !== null && cost > limit) setResultAndStopExecution({ errors: [costRejection(cost, limit)] });
    },
  };
}

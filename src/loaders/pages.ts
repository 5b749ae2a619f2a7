import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import type { Page, PageRequest } from '../db/paging.js';
import type { Store } from '../db/store.js';
import type { TickSort } from '../db/ticks.js';
import type { TickRow } from '../db/ticks.js';

// Nested connections (a tick's holders, a tick's transactions, a chain's ticks) are batched per
// distinct page request: every parent asking for the same page shape is answered by one LATERAL
// statement, so a list of N parents costs one statement, not N. Such a statement may return up to
// N × the page size rows: it is refused before it is sent when that is more than the request's result
// may still hold (its budget, src/graphql/result-budget.ts, read here as the plain counter it is).

/** What an operation's result holds so far, as the page loaders read it (src/graphql/result-budget.ts keeps it). */
export interface RowBudget {
  readonly nodes: number;
  readonly limits: { readonly maxNodes: number };
  /** Set once a limit is passed: the operation's whole answer. */
  exceeded: GraphQLError | null;
}

/** The error of a result over its budget (the page loaders' refusal and the budget's own count). */
export function resultTooLarge(what: string): GraphQLError {
  return new GraphQLError(`Response too large: the result would hold ${what}; ask for smaller pages or fewer nested lists`, {
    extensions: { code: 'BAD_USER_INPUT' },
  });
}

export const tooManyNodes = (maxNodes: number) => resultTooLarge(`more than ${maxNodes} objects and list items (GRAPHQL_MAX_RESULT_NODES)`);

/** Throws unless a statement that may return up to `rows` rows fits in what the budget has left. */
function admitRows(budget: RowBudget | undefined, rows: number): void {
  if (!budget) return;
  if (budget.exceeded) throw budget.exceeded;
  if (budget.nodes + rows > budget.limits.maxNodes) throw (budget.exceeded = tooManyNodes(budget.limits.maxNodes));
}

function pageLoaders<Parent, Row>(
  load: (parents: readonly Parent[], request: PageRequest & { extra?: string }) => Promise<Map<string, Page<Row>>>,
  parentKey: (p: Parent) => string,
  budget: RowBudget | undefined,
) {
  const byRequest = new Map<string, DataLoader<Parent, Page<Row>, string>>();
  return (request: PageRequest & { extra?: string }) => {
    const key = JSON.stringify(request);
    let loader = byRequest.get(key);
    if (!loader) {
      loader = new DataLoader<Parent, Page<Row>, string>(
        async (parents) => {
          admitRows(budget, parents.length * request.limit);
          const pages = await load(parents, request);
          return parents.map((p) => pages.get(parentKey(p)) ?? { rows: [], hasMore: false });
        },
        { cacheKeyFn: parentKey },
      );
      byRequest.set(key, loader);
    }
    return loader;
  };
}

export function createPageLoaders(store: Store, budget?: RowBudget) {
  return {
    holdersOfTick: pageLoaders((ids: readonly string[], req) => store.balances.holdersOfTicks(ids, req), (id) => id, budget),
    /** Holders at a block height: `extra` is the height (one statement per height and page shape). */
    holdersOfTickAt: pageLoaders((ids: readonly string[], req) => store.history.holdersOfTicksAt(ids, req.extra!, req), (id) => id, budget),
    transactionsOfTick: pageLoaders(
      (ticks: readonly TickRow[], req) => store.transactions.ofTicks(ticks, req),
      (t) => t.id,
      budget,
    ),
    ticksOfChain: pageLoaders(
      (chains: readonly string[], req) => store.ticks.listOfChains(chains, (req.extra ?? 'ID') as TickSort, req),
      (c) => c,
      budget,
    ),
  };
}

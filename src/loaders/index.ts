import DataLoader from 'dataloader';
import { GraphQLError } from 'graphql';
import type { Page, PageRequest } from '../db/paging.js';
import type { Store } from '../db/store.js';
import type { TickRow, TickSort } from '../db/ticks.js';
import type { Metrics } from '../observability/metrics.js';
import { createChainLoaders } from './chains.js';
import { createRecordLoaders } from './records.js';
import { createTickLoaders } from './ticks.js';

/**
 * Fresh loaders for one request: batching within it, no caching across requests. Each group (ticks,
 * chains, nested pages, records) is created the first time one of its loaders is asked for, so a request
 * builds only the loaders it uses (a tick's holders: the tick loaders and the holders pages, nothing else).
 */
class RequestLoaders {
  private ticks?: ReturnType<typeof createTickLoaders>;
  private chains?: ReturnType<typeof createChainLoaders>;
  private pages?: ReturnType<typeof createPageLoaders>;
  private records?: ReturnType<typeof createRecordLoaders>;

  constructor(private readonly store: Store, private readonly budget?: RowBudget) {}

  private get tickGroup() {
    return (this.ticks ??= createTickLoaders(this.store));
  }
  private get chainGroup() {
    return (this.chains ??= createChainLoaders(this.store));
  }
  private get pageGroup() {
    return (this.pages ??= createPageLoaders(this.store, this.budget));
  }
  private get recordGroup() {
    return (this.records ??= createRecordLoaders(this.store));
  }

  // a tick loader is handed out with the rows primed so far in it (src/loaders/ticks.ts)
  private get primedTicks() {
    const group = this.tickGroup;
    group.flush();
    return group;
  }

  get tickById() { return this.primedTicks.tickById; }
  get tickByKey() { return this.primedTicks.tickByKey; }
  get tickByDeployHash() { return this.primedTicks.tickByDeployHash; }
  get primeTick() { return this.tickGroup.primeTick; }
  get chainByName() { return this.chainGroup.chainByName; }
  get latestBlock() { return this.chainGroup.latestBlock; }
  get holdersOfTick() { return this.pageGroup.holdersOfTick; }
  get holdersOfTickAt() { return this.pageGroup.holdersOfTickAt; }
  get transactionsOfTick() { return this.pageGroup.transactionsOfTick; }
  get ticksOfChain() { return this.pageGroup.ticksOfChain; }
  get transactionById() { return this.recordGroup.transactionById; }
  get movementById() { return this.recordGroup.movementById; }
}

/** `budget`: the operation's result budget, which the page loaders check before a statement is sent. */
export function createLoaders(store: Store, budget?: RowBudget): Loaders {
  return new RequestLoaders(store, budget);
}

export type Loaders = RequestLoaders;

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

/**
 * Reports DataLoader batch sizes without touching the loaders: every batch function of the loaders calls
 * one store method with the batch's keys as first argument (an array), so the store's array-taking
 * methods are wrapped to observe that array's length, labelled `<sub-store>.<method>`. Other methods and
 * properties (sql, ping) pass through unchanged.
 */
export function observeBatches<S extends object>(store: S, batchSize: Metrics['batchSize']): S {
  const wrapped: Record<string, unknown> = { ...(store as Record<string, unknown>) };
  for (const [name, sub] of Object.entries(store)) {
    // plain sub-store objects only (their methods are own properties); anything else passes through as is
    if (typeof sub !== 'object' || sub === null || Object.getPrototypeOf(sub) !== Object.prototype) continue;
    const methods: Record<string, unknown> = { ...sub };
    for (const [method, fn] of Object.entries(sub)) {
      if (typeof fn !== 'function') continue;
      const batch = `${name}.${method}`;
      methods[method] = function observed(this: unknown, ...args: unknown[]) {
        if (Array.isArray(args[0])) batchSize.observe({ batch }, args[0].length);
        return (fn as (...a: unknown[]) => unknown).apply(sub, args);
      };
    }
    wrapped[name] = methods;
  }
  return wrapped as S;
}

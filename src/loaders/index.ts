import type { Store } from '../db/store.js';
import type { Metrics } from '../observability/metrics.js';
import { createChainLoaders } from './chains.js';
import { createPageLoaders, type RowBudget } from './pages.js';
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

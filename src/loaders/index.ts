import type { Store } from '../db/store.js';
import { createChainLoaders } from './chains.js';
import { createPageLoaders, type AdmitRows } from './pages.js';
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

  constructor(private readonly store: Store, private readonly admit?: AdmitRows) {}

  private get tickGroup() {
    return (this.ticks ??= createTickLoaders(this.store));
  }
  private get chainGroup() {
    return (this.chains ??= createChainLoaders(this.store));
  }
  private get pageGroup() {
    return (this.pages ??= createPageLoaders(this.store, this.admit));
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

export function createLoaders(store: Store, admit?: AdmitRows): Loaders {
  return new RequestLoaders(store, admit);
}

export type Loaders = RequestLoaders;

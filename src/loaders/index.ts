import type { Store } from '../db/store.js';
import { createChainLoaders } from './chains.js';
import { createPageLoaders, type AdmitRows } from './pages.js';
import { createRecordLoaders } from './records.js';
import { createTickLoaders } from './ticks.js';

/** Fresh loaders for one request: batching within it, no caching across requests. */
export function createLoaders(store: Store, admit?: AdmitRows) {
  return { ...createTickLoaders(store), ...createChainLoaders(store), ...createPageLoaders(store, admit), ...createRecordLoaders(store) };
}

export type Loaders = ReturnType<typeof createLoaders>;

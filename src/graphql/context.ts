import type { Store } from '../db/store.js';
import { createLoaders, type Loaders } from '../loaders/index.js';

export interface PagingConfig {
  defaultPageSize: number;
  maxPageSize: number;
}

export interface Context {
  store: Store;
  loaders: Loaders;
  paging: PagingConfig;
}

/** One context per request: its own loaders, so batching never leaks data between requests. */
export function createContext(store: Store, paging: PagingConfig): Context {
  return { store, loaders: createLoaders(store), paging };
}

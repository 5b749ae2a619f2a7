import type { Store } from '../db/store.js';
import { createLoaders, type Loaders } from '../loaders/index.js';
import { ResultBudget, type ResultLimits } from './result-budget.js';

export interface PagingConfig {
  defaultPageSize: number;
  maxPageSize: number;
}

export interface Context {
  store: Store;
  loaders: Loaders;
  paging: PagingConfig;
  /** What the operation's result may still grow by: src/graphql/result-budget.ts. */
  budget: ResultBudget;
}

/** One context per request: its own loaders, so batching never leaks data between requests. */
export function createContext(store: Store, paging: PagingConfig, resultLimits: ResultLimits): Context {
  const budget = new ResultBudget(resultLimits);
  return { store, loaders: createLoaders(store, (rows) => budget.admit(rows)), paging, budget };
}

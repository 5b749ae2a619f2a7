// What one GraphQL operation carries: the store, its own loaders, the paging limits and its result budget.

import type { Access } from '../access/gate.js';
import type { Store } from '../db/store.js';
import type { LiveHub } from '../live/hub.js';
import { createLoaders, type Loaders } from '../loaders/index.js';
import { ResultBudget, type ResultLimits } from './result-budget.js';

export interface PagingConfig {
  defaultPageSize: number;
  maxPageSize: number;
  /** Deepest `offset` of a list at a block height (HISTORY_MAX_OFFSET; default unbounded). */
  historyMaxOffset?: number;
}

export interface Context {
  store: Store;
  loaders: Loaders;
  paging: PagingConfig;
  /** What the operation's result may still grow by (src/graphql/result-budget.ts). */
  budget: ResultBudget;
  /** Live events for subscriptions (src/live); absent where nothing is subscribed (JSON-RPC). */
  live?: LiveHub;
}

/** One context per request: its own loaders, so batching never leaks data between requests. */
export function createContext(store: Store, paging: PagingConfig, resultLimits: ResultLimits): Context {
  const budget = new ResultBudget(resultLimits);
  return { store, loaders: createLoaders(store, budget), paging, budget };
}

/** A context maker bound to a gateway's store and limits (the JSON-RPC layer's, one context per request). */
export function contextFactory(store: Store, paging: PagingConfig, resultLimits: ResultLimits): () => Context {
  return () => createContext(store, paging, resultLimits);
}

/**
 * Before each event of a subscription: fresh loaders (a row loaded for an earlier event would be stale)
 * and a fresh result budget (the limits hold per event, not per stream).
 */
export function renewContext(ctx: Context): void {
  const budget = ctx.budget.fresh();
  ctx.budget = budget;
  ctx.loaders = createLoaders(ctx.store, budget);
}

/** A key's raised page-size clamp (api_keys.max_page_size above the default), or null: the JSON-RPC layer's share of a key's overrides. */
export function raisedPaging(access: Access | undefined, paging: PagingConfig): PagingConfig | null {
  const max = access?.kind === 'key' ? access.key.overrides.maxPageSize : null;
  return max !== null && max > paging.maxPageSize ? { ...paging, maxPageSize: max } : null;
}

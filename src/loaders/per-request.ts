import type DataLoader from 'dataloader';
import type { Store } from '../db/store.js';
import type { Loaders } from './index.js';

// Per-request DataLoaders for the fields of the extended v2 surface, created on first use instead of
// with the shared loader set: one loader per (request, name), dropped with the request. Keyed by the
// request's loader set rather than the context object: the operations of one JSON-RPC batch run with
// contexts of their own (each its own result budget) that share the request's loaders.

/** What a per-request loader needs of the operation's context. */
export interface RequestContext {
  store: Store;
  loaders: Loaders;
}

const byLoaders = new WeakMap<Loaders, Map<string, DataLoader<unknown, unknown, unknown>>>();

export function requestLoader<K, V, C = K>(
  ctx: { loaders: Loaders }, name: string, create: () => DataLoader<K, V, C>,
): DataLoader<K, V, C> {
  let loaders = byLoaders.get(ctx.loaders);
  if (!loaders) byLoaders.set(ctx.loaders, (loaders = new Map()));
  let loader = loaders.get(name) as DataLoader<K, V, C> | undefined;
  if (!loader) loaders.set(name, (loader = create()) as unknown as DataLoader<unknown, unknown, unknown>);
  return loader;
}

import DataLoader from 'dataloader';
import type { Context } from '../context.js';

// Per-request DataLoaders for the fields of the extended v2 surface, kept beside those fields instead of
// in the shared loader set: one loader per (request, name), dropped with the request. Keyed by the
// request's loader set rather than the context object: the operations of one JSON-RPC batch run with
// contexts of their own (each its own result budget) that share the request's loaders.

const byContext = new WeakMap<Context['loaders'], Map<string, DataLoader<any, any, any>>>();

export function requestLoader<K, V, C = K>(
  ctx: Context, name: string, create: () => DataLoader<K, V, C>,
): DataLoader<K, V, C> {
  let loaders = byContext.get(ctx.loaders);
  if (!loaders) byContext.set(ctx.loaders, (loaders = new Map()));
  let loader = loaders.get(name);
  if (!loader) loaders.set(name, (loader = create()));
  return loader as DataLoader<K, V, C>;
}

import type { RoutedSource } from './statement-runner.js';
import { currentScope } from '../request/scope.js';
import type { DataSnapshot } from './version.js';

// Routing is per request, not per statement: a request is pinned, at its first use, to one source in
// rotation (replicas round robin, the primary when none is) together with the data snapshot that source
// had then; a statement retried elsewhere goes only to a source at least as new (the primary always is).

interface RoutableSource extends RoutedSource {
  role: 'primary' | 'replica';
  /** The last data snapshot read from it. */
  readonly snapshot: DataSnapshot | null;
}

export interface Pin<S> {
  source: S;
  snapshot: DataSnapshot | null;
}

export function createSourceRouter<S extends RoutableSource>(options: {
  primary: S;
  replicas: S[];
  /** Whether a source may serve now (safe, and for a replica in rotation and fresh). */
  servable(source: S): boolean;
}) {
  const { primary, replicas, servable } = options;
  const all = [primary, ...replicas];
  // the pins of requests in flight (scopes are collected with their requests)
  const pins = new WeakMap<object, Pin<S>>();
  let next = 0;
  function choose(): Pin<S> {
    const live = replicas.filter(servable);
    const source = live.length ? live[next++ % live.length]! : primary;
    return { source, snapshot: source.snapshot };
  }
  function pin(): Pin<S> {
    const scope = currentScope();
    if (!scope || scope.primaryOnly) return { source: primary, snapshot: primary.snapshot };
    let pinned = pins.get(scope);
    if (!pinned) pins.set(scope, pinned = choose());
    return pinned;
  }
  return {
    /** The current request's pin (chosen now if it has none): its source and that source's snapshot. */
    pin,
    pinned: () => pin().source,
    /** The pinned source's latest known snapshot (the cache refuses to store once it has moved on). */
    live: () => pin().source.snapshot,
    retryTarget(failed: RoutedSource): S | null {
      const floor = pin().snapshot;
      const others = all.filter((s) => s !== failed && servable(s) && atLeast(s, floor));
      // never the same server again at once: its pool is busy replacing the lost connection, and a
      // server that refuses connections would only be asked twice
      return others[0] ?? null;
    },
  };
}

function atLeast(candidate: RoutableSource, floor: DataSnapshot | null): boolean {
  if (candidate.role === 'primary' || floor === null) return true;
  const s = candidate.snapshot;
  return s !== null && s.epoch === floor.epoch && BigInt(s.version) >= BigInt(floor.version);
}

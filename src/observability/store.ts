import type { Metrics } from './metrics.js';

/**
 * Reports DataLoader batch sizes without touching the loaders: every batch function of the loaders calls
 * one store method with the batch's keys as first argument (an array), so the store's array-taking
 * methods are wrapped to observe that array's length, labelled `<sub-store>.<method>`. Other methods and
 * properties (sql, ping) pass through unchanged.
 */
export function instrumentStore<S extends object>(store: S, metrics: Metrics): S {
  const wrapped: Record<string, unknown> = { ...(store as Record<string, unknown>) };
  for (const [name, sub] of Object.entries(store)) {
    // plain sub-store objects only (their methods are own properties); anything else passes through as is
    if (typeof sub !== 'object' || sub === null || Object.getPrototypeOf(sub) !== Object.prototype) continue;
    const methods: Record<string, unknown> = { ...sub };
    for (const [method, fn] of Object.entries(sub)) {
      if (typeof fn !== 'function') continue;
      const batch = `${name}.${method}`;
      methods[method] = function observed(this: unknown, ...args: unknown[]) {
        if (Array.isArray(args[0])) metrics.batchSize.observe({ batch }, args[0].length);
        return (fn as (...a: unknown[]) => unknown).apply(sub, args);
      };
    }
    wrapped[name] = methods;
  }
  return wrapped as S;
}

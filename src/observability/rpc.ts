import type { Metrics } from './metrics.js';
import { currentScope, type CacheOutcome } from './scope.js';

export interface RpcCallInfo {
  /** The method as sent (anything, for an invalid request). */
  method: unknown;
  iface: 'v1' | 'v2';
  /** JSON-RPC error code of the reply; undefined on success. */
  code?: number;
  cache?: CacheOutcome;
  ms: number;
}

/**
 * Records one answered JSON-RPC call: metrics per method and the entry the request log line is built
 * from. A method the tables do not have (answered -32601) or a malformed request (-32600) gets a fixed
 * label, so clients cannot add series by inventing names.
 */
export function rpcObserver(metrics: Metrics) {
  return (call: RpcCallInfo) => {
    const name = typeof call.method === 'string' ? call.method : '(invalid)';
    const label = call.code === -32601 ? '(unknown)' : call.code === -32600 || typeof call.method !== 'string' ? '(invalid)' : call.method;
    const operation = `${call.iface}:${label}`;
    metrics.requests.inc({ surface: 'rpc', operation, outcome: call.code === undefined ? 'ok' : 'error' });
    metrics.duration.observe({ surface: 'rpc', operation, cache: call.cache ?? 'bypass' }, call.ms / 1000);
    if (call.code !== undefined) metrics.errors.inc({ surface: 'rpc', code: String(call.code) });
    currentScope()?.rpc.push({ method: name.length > 64 ? `${name.slice(0, 64)}…` : name, code: call.code, cache: call.cache ?? 'bypass' });
  };
}

export type RpcObserver = ReturnType<typeof rpcObserver>;

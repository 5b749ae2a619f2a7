import type { Registry } from 'prom-client';
import type { Sql } from '../db/client.js';
import type { Logger } from '../observability/logger.js';
import { createFailureTracker } from './failures.js';
import { createAccessGate, type AccessGate } from './gate.js';
import { createAccessHook, type AccessHook } from './http-hook.js';
import { registerAccessMetrics } from './metrics.js';
import { createQuota, type Quota } from './quota.js';
import { createKeyRegistry, type KeyRegistry } from './registry.js';

// API keys and quotas as one part of the gateway, built by the composition root (src/app.ts): the key
// registry on the primary's state connection, the quota (Redis or in process), the bad-key tracker, the
// per-key metrics, the gate and the listener's hook.

export interface AccessSettings {
  /** ANONYMOUS_ACCESS: requests without a key are served (allow) or answered 401 (deny). */
  anonymous: 'allow' | 'deny';
  /** API_KEYS_RELOAD_MS: the registry's reload when no notification came. */
  reloadMs: number;
  /** QUOTA_GATEWAYS: gateways sharing the keys (each takes 1/N of a key's limits while Redis fails). */
  gateways: number;
  /** BAD_KEY_FREE_FAILURES and BAD_KEY_MAX_BLOCK_S: src/access/failures.ts. */
  badKeyFree: number;
  badKeyMaxBlockS: number;
  redisUrl?: string;
  redisCommandTimeoutMs: number;
  redisBreakerFailures: number;
  redisBreakerOpenMs: number;
}

export interface AccessControl {
  hook: AccessHook;
  gate: AccessGate;
  registry: KeyRegistry;
  quota: Quota;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function createAccessControl(settings: AccessSettings, deps: {
  /** A connection of the primary that is not the request pool's (the state connection: LISTEN shares it). */
  sql: Sql;
  /** The bound on one read of the keys, and on setting up their LISTEN (the sources' state-read bound). */
  readTimeoutMs: number;
  listen: boolean;
  registry: Registry;
  logger: Logger;
  clientKey: (address: string) => string;
  /** Told how many keys there are after each reload of the registry. */
  onKeys?: (count: number) => void;
}): AccessControl {
  const { logger } = deps;
  const quota = createQuota({
    redisUrl: settings.redisUrl, commandTimeoutMs: settings.redisCommandTimeoutMs, breakerFailures: settings.redisBreakerFailures,
    breakerOpenMs: settings.redisBreakerOpenMs, gateways: settings.gateways, logger,
  });
  const registry = createKeyRegistry({
    sql: deps.sql, listen: deps.listen, reloadMs: settings.reloadMs, readTimeoutMs: deps.readTimeoutMs,
    onReload: (keys, via) => {
      quota.retain(registry.prefixes());
      if (keys > 0) quota.connect();
      deps.onKeys?.(registry.size());
      logger.debug({ keys, via }, 'API keys loaded');
    },
    onError: (error, where) => logger.warn({ err: (error as Error).message, where },
      where === 'listen' ? 'API keys: LISTEN failed, reloading every API_KEYS_RELOAD_MS' : 'API keys: cannot read them (the keys last read stay in force)'),
  });
  const failures = createFailureTracker({ free: settings.badKeyFree, maxBlockS: settings.badKeyMaxBlockS, forgetMs: 10 * 60_000, maxAddresses: 100_000 });
  const metrics = registerAccessMetrics(deps.registry, { registry, quota });
  const gate = createAccessGate({ registry, quota, failures, metrics, anonymous: settings.anonymous, logger });
  return {
    hook: createAccessHook(gate, { anonymous: settings.anonymous, clientKey: deps.clientKey }),
    gate,
    registry,
    quota,
    start: () => registry.start(),
    async stop() {
      await registry.stop();
      await quota.close();
    },
  };
}

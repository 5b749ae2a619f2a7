import { Counter, Gauge, type Registry } from 'prom-client';
import type { Quota } from './quota.js';
import type { KeyRegistry } from './registry.js';

// Per-key series are labelled by the key's NAME (created by the operator: a bounded set, a plain word by
// the table's CHECK), never by the key or its secret. Refused credentials are counted by reason only: an
// unknown key has no name, and a client could otherwise invent label values.

export interface AccessMetrics {
  requests: Counter<'key'>;
  limited: Counter<'key' | 'limit'>;
  errors: Counter<'key'>;
  bytes: Counter<'key'>;
  refused: Counter<'reason'>;
}

export function registerAccessMetrics(registry: Registry, parts: { registry: KeyRegistry; quota: Quota }): AccessMetrics {
  const registers = [registry];
  new Gauge({
    name: 'igw_api_keys', help: 'API keys held in memory (valid, revoked and expired)', registers,
    collect() {
      this.set(parts.registry.size());
    },
  });
  new Gauge({
    name: 'igw_quota_mode', help: 'Where key quotas are decided: 1 for the current mode (redis: shared; local: no REDIS_URL; fallback: Redis failing, 1/QUOTA_GATEWAYS per gateway)',
    labelNames: ['mode'] as const, registers,
    collect() {
      const mode = parts.quota.mode();
      for (const m of ['redis', 'local', 'fallback'] as const) this.set({ mode: m }, m === mode ? 1 : 0);
    },
  });
  new Counter({
    name: 'igw_quota_fallback_decisions_total', help: 'Keyed requests decided by a gateway\'s own bucket while Redis failed', registers,
    collect() {
      this.reset();
      this.inc(parts.quota.fallbackDecisions());
    },
  });
  return {
    requests: new Counter({ name: 'igw_key_requests_total', help: 'Requests admitted with a valid API key, by key name', labelNames: ['key'] as const, registers }),
    limited: new Counter({
      name: 'igw_key_limited_total', help: 'Keyed requests refused with 429, by key name and limit (rate, daily)', labelNames: ['key', 'limit'] as const, registers,
    }),
    errors: new Counter({ name: 'igw_key_errors_total', help: 'Keyed requests answered with an error status (>= 400), by key name', labelNames: ['key'] as const, registers }),
    bytes: new Counter({ name: 'igw_key_response_bytes_total', help: 'Response bytes sent to keyed requests, by key name', labelNames: ['key'] as const, registers }),
    refused: new Counter({
      name: 'igw_access_refused_total', help: 'Requests refused for their credentials: unknown, revoked, expired, missing (ANONYMOUS_ACCESS=deny), malformed, throttled (bad keys from the address)',
      labelNames: ['reason'] as const, registers,
    }),
  };
}

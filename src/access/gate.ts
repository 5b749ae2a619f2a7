import type { IncomingHttpHeaders } from 'node:http';
import type { Logger } from '../observability/logger.js';
import type { FailureTracker } from './failures.js';
import { retryAfterSeconds } from './limits.js';
import type { AccessMetrics } from './metrics.js';
import type { Quota } from './quota.js';
import { rateLimitHeaders } from './ratelimit-headers.js';
import type { AccessKey, KeyRegistry } from './registry.js';

// One decision per request, before any surface runs it: who is calling (a valid key, or anonymous) and
// whether it may go on. Surfaces word a refusal in their own error shape; this module knows no surface.
// A key travels as `Authorization: Bearer <key>` or `X-API-Key: <key>`; it is never logged, counted or
// echoed — only its public prefix (at debug level) and, once it is valid, its name.

/** Who is calling: the request's access class. */
export type Access = { kind: 'anonymous' } | { kind: 'key'; key: AccessKey };

export interface AccessRefusal {
  kind: 'unauthenticated' | 'too-many-requests' | 'unavailable';
  /** Safe to show the client: never the key. */
  reason: string;
  /** Seconds (429, 503). */
  retryAfterS?: number;
}

export type AccessVerdict =
  | { ok: true; access: Access; headers: Record<string, string> }
  | { ok: false; status: 401 | 429 | 503; refusal: AccessRefusal; headers: Record<string, string> };

export interface AccessGateOptions {
  registry: KeyRegistry;
  quota: Quota;
  failures: FailureTracker;
  metrics: AccessMetrics;
  anonymous: 'allow' | 'deny';
  logger: Logger;
  now?: () => number;
}

export interface AccessGate {
  /** Decides a request from its headers and its client address (the listener's client key). Never throws. */
  check(headers: IncomingHttpHeaders, clientAddress: string): Promise<AccessVerdict>;
  /** Counts an answered keyed request (whether it failed, bytes sent) into the key's usage. */
  finish(access: Access, outcome: { error: boolean; bytes: number }): void;
}

type Credentials = { kind: 'none' } | { kind: 'key'; presented: string } | { kind: 'bad'; reason: string };

const bearer = /^Bearer[ \t]+([^\s,]+)[ \t]*$/i;

/** The key a request presents, from Authorization: Bearer or X-API-Key. */
export function readCredentials(headers: IncomingHttpHeaders): Credentials {
  const authorization = headers.authorization;
  const header = headers['x-api-key'];
  const apiKey = typeof header === 'string' ? header.trim() : undefined;
  let fromAuthorization: string | undefined;
  if (authorization !== undefined) {
    const m = bearer.exec(authorization);
    if (!m) return { kind: 'bad', reason: 'unsupported Authorization header: send "Authorization: Bearer <key>" or "X-API-Key: <key>"' };
    fromAuthorization = m[1]!;
  }
  if (fromAuthorization !== undefined && apiKey !== undefined && apiKey !== fromAuthorization) {
    return { kind: 'bad', reason: 'Authorization and X-API-Key carry different keys' };
  }
  const presented = fromAuthorization ?? apiKey;
  if (presented === undefined) return { kind: 'none' };
  if (presented === '') return { kind: 'bad', reason: 'empty API key' };
  return { kind: 'key', presented };
}

const refuse = (status: 401 | 429 | 503, refusal: AccessRefusal): AccessVerdict => ({
  ok: false, status, refusal, headers: refusal.retryAfterS ? { 'retry-after': String(refusal.retryAfterS) } : {},
});

export function createAccessGate(options: AccessGateOptions): AccessGate {
  const { registry, quota, failures, metrics, logger } = options;
  const now = options.now ?? Date.now;
  const anonymous: AccessVerdict = { ok: true, access: { kind: 'anonymous' }, headers: {} };

  const badKey = (reason: 'unknown' | 'revoked' | 'expired' | 'malformed', clientAddress: string, message: string, prefix: string | null) => {
    metrics.refused.inc({ reason });
    const blocked = failures.fail(clientAddress);
    logger.debug({ keyPrefix: prefix, reason, client: clientAddress, blockedS: blocked }, 'API key refused');
    return refuse(401, { kind: 'unauthenticated', reason: message });
  };

  return {
    async check(requestHeaders, clientAddress) {
      const credentials = readCredentials(requestHeaders);
      if (credentials.kind === 'none') {
        if (options.anonymous === 'allow') return anonymous;
        metrics.refused.inc({ reason: 'missing' });
        return refuse(401, { kind: 'unauthenticated', reason: 'an API key is required: send "Authorization: Bearer <key>" or "X-API-Key: <key>"' });
      }
      // an address sending bad keys waits, and its keys are not even looked at meanwhile
      const blockedS = failures.blockedFor(clientAddress);
      if (blockedS > 0) {
        metrics.refused.inc({ reason: 'throttled' });
        return refuse(429, { kind: 'too-many-requests', reason: `too many invalid API keys from this client address: retry after ${blockedS} s`, retryAfterS: blockedS });
      }
      if (credentials.kind === 'bad') return badKey('malformed', clientAddress, credentials.reason, null);
      const found = registry.lookup(credentials.presented);
      switch (found.status) {
        case 'unknown':
          return badKey(found.prefix ? 'unknown' : 'malformed', clientAddress, 'invalid API key', found.prefix);
        case 'revoked':
          return badKey('revoked', clientAddress, 'API key revoked', found.prefix);
        case 'expired':
          return badKey('expired', clientAddress, 'API key expired', found.prefix);
        case 'unavailable':
          return refuse(503, { kind: 'unavailable', reason: 'API keys not loaded yet', retryAfterS: 1 });
      }
      const key = found.key;
      const nowMs = now();
      const decision = await quota.take({ prefix: key.prefix, limits: key.limits });
      const headers = rateLimitHeaders(decision, nowMs);
      if (!decision.allowed) {
        metrics.limited.inc({ key: key.name, limit: decision.limit ?? 'rate' });
        const retryAfterS = retryAfterSeconds(decision, nowMs);
        const reason = decision.limit === 'daily' ? `daily allowance of key ${key.name} used up: retry after ${retryAfterS} s`
          : `rate limit of key ${key.name} exceeded: retry after ${retryAfterS} s`;
        return { ok: false, status: 429, refusal: { kind: 'too-many-requests', reason, retryAfterS }, headers: { ...headers, 'retry-after': String(retryAfterS) } };
      }
      metrics.requests.inc({ key: key.name });
      return { ok: true, access: { kind: 'key', key }, headers };
    },
    finish(access, outcome) {
      if (access.kind !== 'key') return;
      const error = outcome.error ? 1 : 0;
      if (error) metrics.errors.inc({ key: access.key.name });
      if (outcome.bytes > 0) metrics.bytes.inc({ key: access.key.name }, outcome.bytes);
      quota.record(access.key.prefix, { errors: error, bytes: outcome.bytes });
    },
  };
}

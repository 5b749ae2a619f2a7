import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { createFailureTracker } from '../../src/access/failures.js';
import { createAccessGate, type AccessGate, type AccessVerdict } from '../../src/access/gate.js';
import { generateKey } from '../../src/access/key-format.js';
import { registerAccessMetrics } from '../../src/access/metrics.js';
import { createQuota, type Quota } from '../../src/access/quota.js';
import { createKeyRegistry, type KeyRegistry } from '../../src/access/registry.js';
import { insertApiKey } from '../../src/db/api-keys.js';
import { createSql, type Sql } from '../../src/db/client.js';
import { createLogger } from '../../src/observability/logger.js';
import { useDatabase } from '../support/gateway.js';

// The per-request access decision on real PostgreSQL keys: credentials from Authorization: Bearer or
// X-API-Key, anonymous allow/deny, 401 for unknown/revoked/expired, 429 over the quota with Retry-After,
// the RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-10), repeated bad keys from one address
// slowed down, per-key metrics by name — and no key in any log line, metric or refusal.

let reader: Sql;
let keys: KeyRegistry;
let quota: Quota;
const lines: string[] = [];
const metricsRegistry = new Registry();
const said: string[] = [];
const secrets: string[] = [];
let gate: AccessGate;
let denyGate: AccessGate;
const key: Record<string, string> = {};

async function addKey(name: string, extra: Partial<Parameters<typeof insertApiKey>[1]> = {}) {
  const g = generateKey();
  await insertApiKey(db.sql, { name, prefix: g.prefix, secretSha256: g.secretSha256, ratePerS: 1, burst: 3, ...extra });
  key[name] = g.key;
  secrets.push(g.key.slice(12));
}

const statusOf = (v: AccessVerdict) => (v.ok ? 200 : v.status);

async function check(g: AccessGate, headers: Record<string, string>, address = '127.0.0.1'): Promise<AccessVerdict> {
  const verdict = await g.check(headers, address);
  said.push(JSON.stringify(verdict));
  return verdict;
}

const db = useDatabase({
  load: async (db) => {
    reader = createSql({ ...db.target, poolMax: 1, statementTimeoutMs: 5_000, connectTimeoutS: 5, readOnly: true });
    await addKey('partner', { dailyAllowance: 100 });
    await addKey('other', { ratePerS: 100, burst: 100 });
    await addKey('gone');
    await addKey('old');
    await db.sql`UPDATE api_keys SET revoked_at = now() WHERE name = 'gone'`;
    await db.sql`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE name = 'old'`;
    keys = createKeyRegistry({ sql: reader, listen: false, reloadMs: 60_000 });
    await keys.start();
    quota = createQuota({ commandTimeoutMs: 50, breakerFailures: 5, breakerOpenMs: 1_000, gateways: 1, logger: createLogger({ level: 'silent' }) });
    const logger = createLogger({ level: 'trace', destination: new Writable({ write(c, _e, done) { lines.push(String(c)); done(); } }) });
    const metrics = registerAccessMetrics(metricsRegistry, { registry: keys, quota });
    const failures = () => createFailureTracker({ free: 3, maxBlockS: 4, forgetMs: 60_000, maxAddresses: 1_000 });
    gate = createAccessGate({ registry: keys, quota, failures: failures(), metrics, anonymous: 'allow', logger });
    denyGate = createAccessGate({ registry: keys, quota, failures: failures(), metrics, anonymous: 'deny', logger });
  },
});

afterAll(async () => {
  await keys?.stop();
  await quota?.close();
  await reader?.end({ timeout: 5 });
});

describe('the access gate', () => {
  it('lets anonymous requests through with ANONYMOUS_ACCESS=allow, and refuses them (401) with deny', async () => {
    expect(await check(gate, {})).toEqual({ ok: true, access: { kind: 'anonymous' }, headers: {} });
    const denied = await check(denyGate, {});
    expect(denied).toMatchObject({ ok: false, status: 401, refusal: { kind: 'unauthenticated', reason: expect.stringMatching(/API key is required/) } });
  });

  it('takes the key from Authorization: Bearer or X-API-Key, and answers the RateLimit fields', async () => {
    const first = await check(gate, { authorization: `Bearer ${key.partner}` });
    expect(first).toMatchObject({ ok: true, access: { kind: 'key', key: { name: 'partner' } } });
    expect(first.headers['ratelimit-policy']).toBe('"burst";q=3;w=3, "daily";q=100;w=86400');
    expect(first.headers.ratelimit).toMatch(/^"burst";r=2;t=1, "daily";r=99;t=\d+$/);
    const second = await check(gate, { 'x-api-key': key.partner! });
    expect(second.headers.ratelimit).toMatch(/^"burst";r=1;t=2, "daily";r=98;t=\d+$/);
    const both = await check(gate, { authorization: `bearer ${key.partner}`, 'x-api-key': key.partner! });
    expect(both.ok).toBe(true);
    // the burst is spent: 429 with Retry-After and the fields
    const over = await check(gate, { 'x-api-key': key.partner! });
    expect(over).toMatchObject({ ok: false, status: 429, refusal: { kind: 'too-many-requests', retryAfterS: 1 } });
    expect(over.headers).toMatchObject({ 'retry-after': '1', ratelimit: expect.stringMatching(/^"burst";r=0;t=3, "daily";r=97;/) });
  });

  it('answers 401 for unknown, revoked, expired and malformed credentials', async () => {
    const address = '127.0.0.50';
    const expectations: [Record<string, string>, RegExp][] = [
      [{ authorization: `Bearer ${generateKey().key}` }, /^invalid API key$/],
      [{ 'x-api-key': key.gone! }, /^API key revoked$/],
      [{ 'x-api-key': key.old! }, /^API key expired$/],
    ];
    for (const [headers, reason] of expectations) {
      expect(await check(gate, headers, address)).toMatchObject({ ok: false, status: 401, refusal: { kind: 'unauthenticated', reason: expect.stringMatching(reason) } });
    }
    for (const headers of [{ authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, { authorization: `Bearer ${key.partner}`, 'x-api-key': key.other! }] as Record<string, string>[]) {
      expect(await check(gate, headers, '127.0.0.51')).toMatchObject({ ok: false, status: 401 });
    }
  });

  it('slows down repeated bad keys from one address: 429 without looking at the key, other addresses unaffected', async () => {
    const address = '127.0.0.60';
    const bad = { 'x-api-key': generateKey().key };
    for (let i = 0; i < 3; i++) expect(statusOf(await check(gate, bad, address))).toBe(401);
    // the fourth bad key is answered, and blocks the address for 1 s
    expect(statusOf(await check(gate, bad, address))).toBe(401);
    const blocked = await check(gate, { 'x-api-key': key.other! }, address);
    expect(blocked).toMatchObject({ ok: false, status: 429, headers: { 'retry-after': '1' }, refusal: { reason: expect.stringMatching(/too many invalid API keys/) } });
    expect((await check(gate, { 'x-api-key': key.other! }, '127.0.0.61')).ok).toBe(true);
    // anonymous requests from it guess nothing: not blocked
    expect((await check(gate, {}, address)).ok).toBe(true);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await check(gate, { 'x-api-key': key.other! }, address)).ok).toBe(true);
    // the next bad key doubles the wait
    await check(gate, bad, address);
    expect((await check(gate, bad, address)).headers['retry-after']).toBe('2');
  });

  it('counts a keyed request\'s outcome by key name', async () => {
    const verdict = await check(gate, { 'x-api-key': key.other! }, '127.0.0.70');
    expect(verdict.ok).toBe(true);
    if (!verdict.ok) return;
    gate.finish(verdict.access, { error: false, bytes: 1_000 });
    gate.finish(verdict.access, { error: true, bytes: 200 });
    gate.finish({ kind: 'anonymous' }, { error: true, bytes: 5 });
    const text = await metricsRegistry.metrics();
    expect(text).toContain('igw_key_errors_total{key="other"} 1');
    expect(text).toContain('igw_key_response_bytes_total{key="other"} 1200');
    expect(text).toMatch(/igw_key_requests_total\{key="partner"\} 3/);
    expect(text).toMatch(/igw_key_limited_total\{key="partner",limit="rate"\} 1/);
    expect(text).toMatch(/igw_access_refused_total\{reason="revoked"\} 1/);
  });

  it('never puts a key in a log line, a metric or a refusal (only its prefix, at debug level)', async () => {
    const text = await metricsRegistry.metrics();
    const everything = [...lines, text, ...said].join('\n');
    expect(lines.some((l) => l.includes('"keyPrefix":"igw'))).toBe(true);
    for (const secret of secrets) expect(everything).not.toContain(secret);
    // nor the unknown keys' secrets
    for (const l of said) expect(l).not.toMatch(/igw[0-9a-f]{8}_[A-Za-z0-9_-]{43}/);
    for (const l of lines) expect(l).not.toMatch(/igw[0-9a-f]{8}_[A-Za-z0-9_-]{43}/);
  });
});

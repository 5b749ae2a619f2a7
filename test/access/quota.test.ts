import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/access/key-format.js';
import type { QuotaLimits } from '../../src/access/limits.js';
import { createQuota, quotaNamespace, type Quota } from '../../src/access/quota.js';
import { readUsage } from '../../src/access/redis-quota.js';
import { utcDay } from '../../src/access/limits.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';

// Key quotas on a private redis-server: two quota clients (two gateways) hammering one key together admit
// about rate × seconds + burst, not twice that; the daily allowance is shared too; when Redis dies or hangs
// each gateway falls back to its own bucket at 1/QUOTA_GATEWAYS of the key's limits (logged, never
// unlimited), and the shared counters come back with Redis.

let redis: OwnRedis;
const quotas: Quota[] = [];
const logLines: string[] = [];
const logger = createLogger({
  level: 'info',
  destination: new Writable({ write(chunk, _e, done) { logLines.push(String(chunk)); done(); } }),
});

// a generous command timeout on a loaded test machine (a timed-out command is a fallback decision by design);
// the hang test uses a short one
function quota(gateways = 2, url: string | null = redis.url, commandTimeoutMs = 1_000): Quota {
  const q = createQuota({ redisUrl: url ?? undefined, commandTimeoutMs, breakerFailures: 3, breakerOpenMs: 300, gateways, logger, flushMs: 100 });
  quotas.push(q);
  return q;
}

/** Both clients take as fast as they can for `ms`; the admitted count. */
async function hammer(clients: Quota[], prefix: string, limits: QuotaLimits, ms: number): Promise<{ admitted: number; refused: number; modes: Set<string> }> {
  const end = performance.now() + ms;
  let admitted = 0;
  let refused = 0;
  const modes = new Set<string>();
  await Promise.all(clients.flatMap((q) => Array.from({ length: 4 }, async () => {
    while (performance.now() < end) {
      const d = await q.take({ prefix, limits });
      modes.add(d.mode);
      if (d.allowed) admitted++;
      else refused++;
      if (d.mode !== 'redis') await new Promise((r) => setTimeout(r, 1));
    }
  })));
  return { admitted, refused, modes };
}

async function ready(q: Quota) {
  q.connect();
  for (let i = 0; i < 100 && q.mode() !== 'redis'; i++) await new Promise((r) => setTimeout(r, 50));
  expect(q.mode()).toBe('redis');
}

beforeAll(async () => {
  redis = await startRedis();
});

afterAll(async () => {
  for (const q of quotas) await q.close();
  await redis?.stop();
});

describe('key quotas', () => {
  it('two gateways hammering one key together admit about rate x seconds + burst', async () => {
    const [a, b] = [quota(), quota()];
    await Promise.all([ready(a!), ready(b!)]);
    const limits = { ratePerS: 20, burst: 10, dailyAllowance: null };
    const start = performance.now();
    const run = await hammer([a!, b!], generateKey().prefix, limits, 2_000);
    const seconds = (performance.now() - start) / 1000;
    expect(run.modes).toEqual(new Set(['redis']));
    expect(run.refused).toBeGreaterThan(run.admitted);
    // rate x seconds + burst, +-1 token for the edges; two separate buckets would admit ~2x
    const expected = 20 * seconds + 10;
    expect(run.admitted).toBeLessThanOrEqual(Math.ceil(expected) + 1);
    expect(run.admitted).toBeGreaterThanOrEqual(Math.floor(20 * (seconds - 0.3) + 10));
  });

  it('shares the daily allowance and counts the day in Redis', async () => {
    const [a, b] = [quota(), quota()];
    await Promise.all([ready(a!), ready(b!)]);
    const prefix = generateKey().prefix;
    const limits = { ratePerS: 1_000, burst: 1_000, dailyAllowance: 7 };
    const decisions = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a! : b!).take({ prefix, limits })));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(7);
    expect(decisions.filter((d) => !d.allowed).every((d) => d.limit === 'daily')).toBe(true);
    a!.record(prefix, { errors: 2, bytes: 1234 });
    await a!.flush();
    const client = new Redis(redis.url);
    const usage = await readUsage(client, quotaNamespace, utcDay(Date.now()));
    client.disconnect();
    expect(usage.get(prefix)).toEqual({ requests: 7, limited: 5, errors: 2, bytes: 1234 });
  });

  it('without REDIS_URL, each process keeps its own bucket at the full rate', async () => {
    const q = quota(2, null);
    expect(q.mode()).toBe('local');
    const prefix = generateKey().prefix;
    const d = await Promise.all(Array.from({ length: 8 }, () => q.take({ prefix, limits: { ratePerS: 1, burst: 5, dailyAllowance: null } })));
    expect(d.filter((x) => x.allowed)).toHaveLength(5);
    expect(d[7]).toMatchObject({ allowed: false, limit: 'rate', mode: 'local' });
  });

  it('Redis killed: each gateway falls back to 1/QUOTA_GATEWAYS of the limits (logged), then shares again', async () => {
    const [a, b] = [quota(2), quota(2)];
    await Promise.all([ready(a!), ready(b!)]);
    const prefix = generateKey().prefix;
    const limits = { ratePerS: 20, burst: 10, dailyAllowance: 1_000 };
    await redis.kill();
    const start = performance.now();
    const run = await hammer([a!, b!], prefix, limits, 1_500);
    const seconds = (performance.now() - start) / 1000;
    expect(run.modes.has('fallback')).toBe(true);
    expect(run.modes.has('redis')).toBe(false);
    // two stand-ins at half the rate and burst each: about the shared bucket's total, never unlimited
    expect(run.admitted).toBeLessThanOrEqual(Math.ceil(20 * seconds + 10) + 2);
    expect(run.admitted).toBeGreaterThan(10);
    expect(a!.mode()).toBe('fallback');
    expect(a!.fallbackDecisions()).toBeGreaterThan(0);
    expect(logLines.some((l) => l.includes('"quota":"fallback"'))).toBe(true);
    await redis.restart();
    await Promise.all([ready(a!), ready(b!)]);
    const back = await a!.take({ prefix, limits });
    expect(back.mode).toBe('redis');
    expect(logLines.some((l) => l.includes('"quota":"redis"'))).toBe(true);
    // the requests admitted meanwhile are added to the shared day count once Redis answers
    await Promise.all([a!.flush(), b!.flush()]);
    const client = new Redis(redis.url);
    const usage = await readUsage(client, quotaNamespace, utcDay(Date.now()));
    client.disconnect();
    expect(usage.get(prefix)!.requests).toBe(run.admitted + (back.allowed ? 1 : 0));
  });

  it('Redis hung (SIGSTOP): a take waits at most the command timeout, then the stand-in decides', async () => {
    const q = quota(1, redis.url, 200);
    await ready(q);
    const prefix = generateKey().prefix;
    redis.freeze();
    try {
      const t0 = performance.now();
      const d = await q.take({ prefix, limits: { ratePerS: 0.5, burst: 3, dailyAllowance: null } });
      expect(performance.now() - t0).toBeLessThan(800);
      expect(d).toMatchObject({ mode: 'fallback', allowed: true });
      const more = await Promise.all(Array.from({ length: 6 }, () => q.take({ prefix, limits: { ratePerS: 0.5, burst: 3, dailyAllowance: null } })));
      // the stand-in's bucket (burst 3 with one gateway) refuses the rest: not open
      expect(more.filter((x) => x.allowed).length).toBeLessThanOrEqual(2);
    } finally {
      redis.thaw();
    }
  });
});

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { createQuota } from '../../src/access/quota.js';
import { createLogger } from '../../src/observability/logger.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';
import { because } from '../support/skips.js';
import { useDatabase } from '../support/gateway.js';

// `npm run keys -- create|list|revoke|usage` as the operator runs it (the real CLI in a child process) on a
// real PostgreSQL database and a private Redis: the key is printed once as the last (and only) line of
// stdout, only its hash is stored, list never shows it, revoke marks it, usage prints the day's counters.

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
let redis: OwnRedis;

async function keys(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|REDIS_URL|NODE_OPTIONS|VITEST.*)$/.test(k)));
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'src/cli/keys.ts', ...args], { cwd: root, env: { ...clean, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const db = useDatabase({
  load: async () => {
    redis = await startRedis();
  },
});

afterAll(async () => {
  await redis?.stop();
});

describe('npm run keys', () => {
  let created = '';

  it('create prints the key once, as the last line of stdout, and stores only its hash', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noServerForChild);
    const out = await keys(['create', '--database-url', db.target.url!, '--name', 'explorer', '--rate', '600/min', '--burst', '20', '--daily', '50000',
      '--expires', '30d', '--max-page-size', '5000', '--max-streams', '64']);
    expect(out.code).toBe(0);
    const stdoutLines = out.stdout.trimEnd().split('\n');
    expect(stdoutLines).toHaveLength(1);
    created = stdoutLines.at(-1)!;
    expect(created).toMatch(/^igw[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    expect(out.stderr).toMatch(/created key explorer \(prefix igw[0-9a-f]{8}\): rate 10\/s, burst 20, daily 50000, expires 20\d\d-/);
    expect(out.stderr).not.toContain(created.slice(12));
    const [row] = await db.sql<{ prefix: string; secret_sha256: Buffer; rate_per_s: number; max_page_size: number; max_cost: string | null; expires_at: Date }[]>`
      SELECT prefix, secret_sha256, rate_per_s, max_page_size, max_cost, expires_at FROM api_keys WHERE name = 'explorer'`;
    expect(row).toMatchObject({ prefix: created.slice(0, 11), rate_per_s: 10, max_page_size: 5000, max_cost: null });
    expect(Buffer.from(row!.secret_sha256).equals(createHash('sha256').update(created.slice(12)).digest())).toBe(true);
    expect(row!.expires_at.getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
  });

  it('refuses a second key of the same name, a bad rate and a missing database, with one line and exit 1', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noServerForChild);
    const again = await keys(['create', '--database-url', db.target.url!, '--name', 'explorer', '--rate', '1']);
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: 'a key named explorer exists\n' });
    const badRate = await keys(['create', '--database-url', db.target.url!, '--name', 'x', '--rate', 'fast']);
    expect(badRate).toMatchObject({ code: 1, stdout: '' });
    expect(badRate.stderr).toMatch(/^--rate fast: /);
    const noDb = await keys(['list']);
    expect(noDb.code).toBe(1);
    expect(noDb.stderr).toMatch(/pass --database-url or set DATABASE_URL/);
  });

  it('list shows names, prefixes and limits, never the secret; DATABASE_URL works as well', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noServerForChild);
    const out = await keys(['list'], { DATABASE_URL: db.target.url! });
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^name\s+prefix\s+status\s+rate\/s\s+burst\s+daily/);
    expect(out.stdout).toMatch(new RegExp(`explorer\\s+${created.slice(0, 11)}\\s+active\\s+10\\s+20\\s+50000\\s+5000\\s+-\\s+64`));
    expect(out.stdout + out.stderr).not.toContain(created.slice(12));
  });

  it('usage prints the day\'s counters the gateways keep in Redis', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noServerForChild);
    const quota = createQuota({ redisUrl: redis.url, commandTimeoutMs: 1_000, breakerFailures: 5, breakerOpenMs: 1_000, gateways: 1, logger: createLogger({ level: 'silent' }) });
    quota.connect();
    for (let i = 0; i < 100 && quota.mode() !== 'redis'; i++) await new Promise((r) => setTimeout(r, 50));
    const prefix = created.slice(0, 11);
    const limits = { ratePerS: 10, burst: 3, dailyAllowance: 50_000 };
    for (let i = 0; i < 5; i++) await quota.take({ prefix, limits });
    quota.record(prefix, { errors: 1, bytes: 4_096 });
    await quota.close();
    const out = await keys(['usage', '--database-url', db.target.url!, '--redis-url', redis.url, '--days', '2']);
    expect(out.code).toBe(0);
    const today = new Date().toISOString().slice(0, 10);
    expect(out.stdout).toMatch(/^day\s+name\s+requests\s+limited\s+errors\s+bytes/);
    expect(out.stdout).toMatch(new RegExp(`${today}\\s+explorer\\s+3\\s+2\\s+1\\s+4096`));
    const noRedis = await keys(['usage', '--database-url', db.target.url!]);
    expect(noRedis.code).toBe(1);
    expect(noRedis.stderr).toMatch(/usage is kept in Redis/);
  });

  it('revoke marks the key revoked (kept for its usage)', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noServerForChild);
    const out = await keys(['revoke', 'explorer', '--database-url', db.target.url!]);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^revoked explorer \(prefix igw[0-9a-f]{8}\) at /);
    const [row] = await db.sql<{ revoked_at: Date | null }[]>`SELECT revoked_at FROM api_keys WHERE name = 'explorer'`;
    expect(row!.revoked_at).toBeInstanceOf(Date);
    expect((await keys(['list', '--database-url', db.target.url!])).stdout).toMatch(/explorer\s+igw[0-9a-f]{8}\s+revoked/);
    expect(await keys(['revoke', 'nobody', '--database-url', db.target.url!])).toMatchObject({ code: 1, stderr: 'no key named nobody\n' });
  });
});

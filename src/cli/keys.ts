// npm run keys -- create|list|revoke|usage — the operator's API keys (sql/018_api_keys.sql) on an admin
// connection (--database-url, else DATABASE_URL). `create` prints the new key once, as the last line of
// stdout; everything else it says goes to stderr, so `KEY=$(npm run -s keys -- create …)` captures the key
// alone. `usage` reads the day counters the gateways keep in Redis (--redis-url, else REDIS_URL): the
// gateway's role cannot write to PostgreSQL. Failures are one line on stderr and exit code 1.
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { ApiKeyConflictError, insertApiKey, readApiKeys, revokeApiKey, type ApiKeyRow } from '../db/api-keys.js';
import { createSql, type Sql } from '../db/client.js';
import { generateKey } from '../access/key-format.js';
import { utcDay } from '../access/limits.js';
import { quotaNamespace } from '../access/quota.js';
import { readUsage } from '../access/redis-quota.js';

class UsageError extends Error {}

const usage = `usage: npm run keys -- <command> [--database-url URL]
  create --name NAME --rate RATE [--burst N] [--daily N] [--expires WHEN]
         [--max-page-size N] [--max-cost N] [--max-streams N]
         RATE: requests per second, or N/s, N/min, N/h; WHEN: an ISO date-time or 30d, 12h, 90m from now
  list
  revoke NAME
  usage [--days N] [--name NAME] [--redis-url URL]`;

const options = {
  'database-url': { type: 'string' }, 'redis-url': { type: 'string' }, name: { type: 'string' }, rate: { type: 'string' },
  burst: { type: 'string' }, daily: { type: 'string' }, expires: { type: 'string' }, 'max-page-size': { type: 'string' },
  'max-cost': { type: 'string' }, 'max-streams': { type: 'string' }, days: { type: 'string' }, help: { type: 'boolean' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof options; allowPositionals: true }>>['values'];

/** Requests per second from `10`, `2.5/s`, `600/min`, `1000/h`. */
function parseRate(text: string): number {
  const m = /^(\d+(?:\.\d+)?)(?:\/(s|sec|m|min|h|hour))?$/.exec(text.trim());
  const per = m ? ({ s: 1, sec: 1, m: 60, min: 60, h: 3600, hour: 3600 } as Record<string, number>)[m[2] ?? 's']! : 0;
  const rate = m ? Number(m[1]) / per : Number.NaN;
  if (!(rate > 0 && rate <= 1_000_000)) throw new UsageError(`--rate ${text}: a positive number of requests per second, or N/s, N/min, N/h`);
  return rate;
}

/** An expiry from an ISO date-time or a duration from now (`30d`, `12h`, `90m`). */
function parseExpiry(text: string, now = Date.now()): Date {
  const d = /^(\d+)(d|h|m)$/.exec(text.trim());
  const at = d ? new Date(now + Number(d[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[d[2] as 'd' | 'h' | 'm']) : new Date(text);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--expires ${text}: an ISO date-time (2027-01-31T00:00:00Z) or a duration such as 30d, 12h`);
  if (at.getTime() <= now) throw new UsageError(`--expires ${text}: in the past`);
  return at;
}

function positiveInt(name: string, text: string | undefined): number | null {
  if (text === undefined) return null;
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) throw new UsageError(`--${name} ${text}: a positive integer`);
  return Number(text);
}

const say = (line: string) => process.stderr.write(`${line}\n`);

async function create(sql: Sql, values: Values): Promise<void> {
  const name = values.name;
  if (!name || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(name)) throw new UsageError('--name: 1-63 letters, digits, dot, dash or underscore, starting with a letter or digit');
  if (!values.rate) throw new UsageError('--rate is required');
  const ratePerS = parseRate(values.rate);
  const burst = positiveInt('burst', values.burst) ?? Math.max(1, Math.ceil(ratePerS));
  const fields = {
    name, ratePerS, burst,
    dailyAllowance: positiveInt('daily', values.daily),
    expiresAt: values.expires ? parseExpiry(values.expires) : null,
    maxPageSize: positiveInt('max-page-size', values['max-page-size']),
    maxCost: positiveInt('max-cost', values['max-cost']),
    maxStreams: positiveInt('max-streams', values['max-streams']),
  };
  // a prefix clash (32 random bits) is retried with a new key
  for (let attempt = 0; ; attempt++) {
    const generated = generateKey();
    try {
      const row = await insertApiKey(sql, { ...fields, prefix: generated.prefix, secretSha256: generated.secretSha256 });
      say(`created key ${row.name} (prefix ${row.prefix}): ${describeLimits(row)}`);
      say('the key is shown once, below; only its hash is stored');
      process.stdout.write(`${generated.key}\n`);
      return;
    } catch (error) {
      if (error instanceof ApiKeyConflictError && error.column === 'prefix' && attempt < 3) continue;
      if (error instanceof ApiKeyConflictError) throw new UsageError(`a key named ${name} exists`);
      throw error;
    }
  }
}

function describeLimits(row: ApiKeyRow): string {
  const parts = [`rate ${row.ratePerS}/s`, `burst ${row.burst}`, `daily ${row.dailyAllowance ?? '-'}`,
    `expires ${row.expiresAt?.toISOString() ?? '-'}`];
  if (row.maxPageSize) parts.push(`max page size ${row.maxPageSize}`);
  if (row.maxCost) parts.push(`max cost ${row.maxCost}`);
  if (row.maxStreams) parts.push(`max streams ${row.maxStreams}`);
  return parts.join(', ');
}

function status(row: ApiKeyRow, now = Date.now()): string {
  if (row.revokedAt) return 'revoked';
  if (row.expiresAt && row.expiresAt.getTime() <= now) return 'expired';
  return 'active';
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

async function list(sql: Sql): Promise<void> {
  const rows = await readApiKeys(sql);
  const iso = (d: Date | null) => d?.toISOString().replace(/\.\d{3}Z$/, 'Z') ?? '-';
  process.stdout.write(`${table(
    ['name', 'prefix', 'status', 'rate/s', 'burst', 'daily', 'max_page', 'max_cost', 'max_streams', 'expires', 'created'],
    rows.map((r) => [r.name, r.prefix, status(r), String(r.ratePerS), String(r.burst), String(r.dailyAllowance ?? '-'),
      String(r.maxPageSize ?? '-'), String(r.maxCost ?? '-'), String(r.maxStreams ?? '-'), iso(r.expiresAt), iso(r.createdAt)]),
  )}\n`);
}

async function revoke(sql: Sql, name: string | undefined): Promise<void> {
  if (!name) throw new UsageError('revoke needs the key name: npm run keys -- revoke NAME');
  const done = await revokeApiKey(sql, name);
  if (!done) throw new UsageError(`no key named ${name}`);
  process.stdout.write(`revoked ${done.name} (prefix ${done.prefix}) at ${done.revokedAt.toISOString()}\n`);
}

async function showUsage(sql: Sql, values: Values): Promise<void> {
  const url = values['redis-url'] ?? process.env.REDIS_URL;
  if (!url) {
    throw new UsageError('usage is kept in Redis by the gateways: set REDIS_URL or --redis-url (without Redis, see the igw_key_* metrics)');
  }
  const days = positiveInt('days', values.days) ?? 7;
  if (days > 40) throw new UsageError('--days: at most 40 (usage is kept 40 days)');
  const names = new Map((await readApiKeys(sql)).map((r) => [r.prefix, r.name]));
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 5_000, retryStrategy: () => null });
  try {
    await redis.connect();
    const rows: string[][] = [];
    for (let i = days - 1; i >= 0; i--) {
      const day = utcDay(Date.now() - i * 86_400_000);
      for (const [prefix, c] of [...(await readUsage(redis, quotaNamespace, day))].sort()) {
        const name = names.get(prefix) ?? `(deleted ${prefix})`;
        if (values.name && values.name !== name) continue;
        rows.push([day, name, String(c.requests ?? 0), String(c.limited ?? 0), String(c.errors ?? 0), String(c.bytes ?? 0)]);
      }
    }
    process.stdout.write(`${table(['day', 'name', 'requests', 'limited', 'errors', 'bytes'], rows)}\n`);
  } finally {
    redis.disconnect();
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ options, allowPositionals: true, strict: true });
  const [command, ...rest] = positionals;
  if (values.help || !command) {
    process.stderr.write(`${usage}\n`);
    process.exit(values.help ? 0 : 1);
  }
  const url = values['database-url'] ?? process.env.DATABASE_URL;
  if (!url) throw new UsageError('no database: pass --database-url or set DATABASE_URL (an admin role: the gateway\'s own is read-only)');
  const sql = createSql({ url, poolMax: 1, statementTimeoutMs: 30_000, connectTimeoutS: 10, readOnly: false });
  try {
    if (command === 'create') await create(sql, values);
    else if (command === 'list') await list(sql);
    else if (command === 'revoke') await revoke(sql, rest[0]);
    else if (command === 'usage') await showUsage(sql, values);
    else throw new UsageError(`unknown command ${command}\n${usage}`);
  } catch (error) {
    if ((error as { code?: string }).code === '42P01') throw new UsageError('no api_keys table: run `npm run db:migrate` first');
    throw error;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

main().catch((error: unknown) => {
  const message = error instanceof UsageError || (error as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
    ? (error as Error).message
    : `keys failed: ${(error as Error).message ?? String(error)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});

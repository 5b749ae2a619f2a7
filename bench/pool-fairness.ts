// Fair use of the pool under heavy JSON-RPC batches (the "heavy batches monopolise the pool" finding):
// four 100-element batches of 1000-row holder pages at once against a gateway with the default settings,
// while one client sends cheap calls back to back. Writes what each batch got (answered, budget errors,
// timeouts), how long the cheap calls took, and the request log's ms / dbMs / queueMs, to
// bench/results/pool-fairness-<label>.{json,md}.
//
//   tsx bench/pool-fairness.ts [--label NAME] [--database-url postgres://…/igw_bench_pool] [--holders N]
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { createGateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createSql } from '../src/db/client.js';
import { loadDataset } from '../src/db/load.js';
import { migrate } from '../src/db/migrate.js';
import { recreateDatabase, resolveTarget } from './lib/db.js';

const { values: args } = parseArgs({
  options: {
    label: { type: 'string', default: 'current' },
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/igw_bench_pool' },
    holders: { type: 'string', default: '50000' },
  },
});
const holders = Number(args.holders);
const target = resolveTarget(args['database-url']);
const at = '2024-01-15T09:00:00.000Z';
const address = (i: number) => `0x${(0xbe7c0000 + i).toString(16).padStart(40, '0')}`;

async function prepare() {
  await recreateDatabase(target, false);
  const sql = createSql({ url: target.url, poolMax: 1, statementTimeoutMs: 600_000, connectTimeoutS: 10, readOnly: false });
  await migrate(sql);
  const tick = (name: string, n: number) => ({
    tick: { chain: 'eth', protocol: 'erc-20', tick: name, name, limit_per_mint: '1000000', deploy_by: address(0), total_supply: '1000000000',
      deploy_hash: `0x${name.padEnd(64, '0').replace(/[^0-9a-f]/g, 'a')}`, deploy_time: at, transfer_type: 0, decimals: 0, created_at: at, updated_at: null },
    balances: Array.from({ length: n }, (_, i) => ({ chain: 'eth', protocol: 'erc-20', tick: name, address: address(i), balance: String(i + 1), available: String(i + 1) })),
  });
  const crowd = tick('crowd', holders);
  const solo = tick('solo', 3);
  await loadDataset(sql, {
    chains: [{ chain: 'eth', chain_id: 1, outer_chain: 'eth', name: 'Ethereum', logo: '', network_id: 1, ext: '', display_order: 1 }],
    ticks: [crowd.tick, solo.tick],
    balances: [...crowd.balances, ...solo.balances],
  });
  await sql.end({ timeout: 5 });
}

async function main() {
  await prepare();
  const lines: Record<string, any>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _e, done) {
      for (const line of chunk.toString().split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = { ...loadConfig({}), CACHE: false };
  const gateway = createGateway(config, { url: target.url }, { logger: pino({ level: 'info' }, sink) });
  await gateway.ready;
  await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
  const post = async (body: unknown, id: string) => {
    const started = performance.now();
    const response = await fetch(`${base}/v2/rpc`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: JSON.stringify(body) });
    const text = await response.text();
    return { ms: performance.now() - started, bytes: Buffer.byteLength(text), json: JSON.parse(text) };
  };
  const page = (id: number, limit: number, offset: number, tick = 'crowd') =>
    ({ jsonrpc: '2.0', id, method: 'inds_getHoldersByTick', params: [limit, offset, 'eth', 'erc-20', tick, 2] });

  // warm-up: connections open, statements prepared
  await Promise.all(Array.from({ length: config.DB_POOL_MAX }, (_, i) => post(page(i, 5, i, 'solo'), `warm-${i}`)));

  const started = performance.now();
  let heavyRunning = true;
  const heavy = Promise.all([0, 1, 2, 3].map((b) =>
    post(Array.from({ length: 100 }, (_, i) => page(i, 1_000, (i * 37 + b * 11) % (holders - 1_000))), `heavy-${b}`)));
  const cheap: number[] = [];
  const cheapCodes: string[] = [];
  const cheapLoop = (async () => {
    for (let n = 0; heavyRunning; n++) {
      const reply = await post(page(1, 5, 0, 'solo'), `cheap-${n}`);
      cheap.push(reply.ms);
      if (reply.json.error) cheapCodes.push(`${reply.json.error.code} ${reply.json.error.data?.reason ?? ''}`);
    }
  })();
  const batches = await heavy;
  const wallMs = performance.now() - started;
  heavyRunning = false;
  await cheapLoop;
  await gateway.close();

  const round = (x: number) => Math.round(x);
  const sorted = [...cheap].sort((a, b) => a - b);
  const pct = (p: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);
  const logOf = (id: string) => lines.find((l) => l.msg === 'request' && l.reqId === id) ?? {};
  const figures = {
    label: args.label,
    date: new Date().toISOString(),
    settings: {
      DB_POOL_MAX: config.DB_POOL_MAX, DB_STATEMENT_TIMEOUT_MS: config.DB_STATEMENT_TIMEOUT_MS,
      REQUEST_MAX_ROWS: (config as any).REQUEST_MAX_ROWS ?? null,
      REQUEST_MAX_CONCURRENT_STATEMENTS: (config as any).REQUEST_MAX_CONCURRENT_STATEMENTS ?? null,
      DB_QUEUE_TIMEOUT_MS: (config as any).DB_QUEUE_TIMEOUT_MS ?? null, DB_MAX_QUEUE: (config as any).DB_MAX_QUEUE ?? null,
      holders,
    },
    wallMs: round(wallMs),
    batches: batches.map((reply, b) => {
      const elements = reply.json as any[];
      const reason = (e: any) => e.error?.data?.reason;
      const log = logOf(`heavy-${b}`);
      return {
        ms: round(reply.ms), mb: Math.round(reply.bytes / 1e4) / 100,
        answered: elements.filter((e) => e.result).length,
        budgetErrors: elements.filter((e) => reason(e) === 'request row budget exceeded').length,
        timedOut: elements.filter((e) => reason(e) === 'query timed out').length,
        busy: elements.filter((e) => reason(e) === 'server busy').length,
        otherErrors: elements.filter((e) => e.error && !['request row budget exceeded', 'query timed out', 'server busy'].includes(reason(e))).length,
        log: { ms: log.ms, dbMs: log.dbMs, queueMs: log.queueMs ?? null, dbStatements: log.dbStatements },
      };
    }),
    cheap: {
      calls: cheap.length, p50Ms: pct(0.5), p95Ms: pct(0.95), maxMs: round(sorted.at(-1) ?? 0), errors: cheapCodes,
      // where a cheap call's time went, by its log line: queued for a connection, in the database
      maxQueueMs: round(Math.max(0, ...cheap.map((_, n) => logOf(`cheap-${n}`).queueMs ?? 0))),
      maxDbMs: round(Math.max(0, ...cheap.map((_, n) => logOf(`cheap-${n}`).dbMs ?? 0))),
    },
  };
  mkdirSync('bench/results', { recursive: true });
  const file = `bench/results/pool-fairness-${args.label}`;
  writeFileSync(`${file}.json`, `${JSON.stringify(figures, null, 2)}\n`);
  const md = [
    `# Pool fairness: ${args.label} (${figures.date})`, '',
    `4 concurrent JSON-RPC batches × 100 elements × 1000-row holder pages; one client sending a cheap call back to back meanwhile. Settings: ${JSON.stringify(figures.settings)}. All four done in ${figures.wallMs} ms.`, '',
    '| batch | ms | MB | answered | budget errors | timed out | server busy | other | log ms | log dbMs | log queueMs |', '|---|---|---|---|---|---|---|---|---|---|---|',
    ...figures.batches.map((b, i) => `| ${i} | ${b.ms} | ${b.mb} | ${b.answered} | ${b.budgetErrors} | ${b.timedOut} | ${b.busy} | ${b.otherErrors} | ${b.log.ms} | ${b.log.dbMs} | ${b.log.queueMs ?? '—'} |`),
    '', `Cheap calls meanwhile: ${figures.cheap.calls}, p50 ${figures.cheap.p50Ms} ms, p95 ${figures.cheap.p95Ms} ms, max ${figures.cheap.maxMs} ms (log: max queueMs ${figures.cheap.maxQueueMs}, max dbMs ${figures.cheap.maxDbMs}), errors ${figures.cheap.errors.length}.`, '',
  ].join('\n');
  writeFileSync(`${file}.md`, md);
  process.stdout.write(md);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

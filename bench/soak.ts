// npm run bench:soak -- [--seconds 120] [--calm 5] [--admin-url postgres://postgres@127.0.0.1:5432/postgres]
//                       [--normal-rate 20] [--slow-sockets 3000] [--slow-every 5] [--batch-workers 4] [--idle-addresses 157]
//                       [--nested3-at S] [--gateway-env KEY=VALUE]… [--node-arg ARG]… [--only attack,attack] [--label NAME] [--keep-database] [--cpu-prof]
//
// The soak benchmark of the issue "No request may stall or kill the gateway". It creates a fresh database
// on the PostgreSQL server of --admin-url, seeds it with the demo data (npm run db:seed), starts the real
// gateway as a separate process (node --import tsx src/main.ts, production defaults: response cache on,
// every limit at its default), and for --seconds runs every attack of bench/lib/soak-attacks.ts from
// 127.0.0.2 next to a steady normal load from 127.0.0.1 (bench/lib/soak-normal.ts, its own process),
// sampling the gateway's RSS every second. It records RSS max/median, the normal load's p50/p99 and
// errors, each attack's outcomes by status and error code, whether the gateway exited (and how), and the
// size of /metrics; writes bench/results/<YYYY-MM-DD-HHMM>-soak[-label].{json,md}; prints the figures
// next to the targets (RSS ≤ 400 MB, normal p99 ≤ 50 ms, no exit, no normal error). Nothing is asserted
// (exit status 0 whatever the figures). Whatever happens, it stops what it started and drops its database.
import { execFileSync } from 'node:child_process';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { loadAverage } from './lib/load.js';
import { resultsDir } from './lib/scenarios.js';
import { buildAttacks, type Attack } from './lib/soak-attacks.js';
import { protocolAttacks } from './lib/soak-protocol.js';
import { inOwnProcess } from './lib/soak-own-process.js';
import { createSeededDatabase, sampleRssEverySecond, startGateway, gatewayArgv, type SoakDatabase, type SoakGateway } from './lib/soak-gateway.js';
import type { NormalConfig, NormalResult } from './lib/soak-normal.js';
import { soakMarkdown, soakTargets, summaryLines, verdicts, type MetricsFigures, type SoakResult } from './lib/soak-report.js';

const usage = 'usage: npm run bench:soak -- [--seconds 120] [--calm 5] [--admin-url URL] [--normal-rate 20] [--slow-sockets 3000] ' +
  '[--slow-every 5] [--batch-workers 4] [--idle-addresses 157] [--nested3-at S] [--gateway-env KEY=VALUE]… [--only attack,attack] [--label NAME] [--keep-database]';
const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    calm: { type: 'string', default: '5' },
    'admin-url': { type: 'string', default: process.env.SOAK_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'normal-rate': { type: 'string', default: '20' },
    'slow-sockets': { type: 'string', default: '3000' },
    'slow-every': { type: 'string', default: '5' },
    'batch-workers': { type: 'string', default: '4' },
    'idle-addresses': { type: 'string', default: '157' },
    'nested3-at': { type: 'string' },
    'gateway-env': { type: 'string', multiple: true, default: [] },
    // a Node option for the gateway's process (e.g. --max-semi-space-size=32), before the script
    'node-arg': { type: 'string', multiple: true, default: [] },
    only: { type: 'string' },
    label: { type: 'string' },
    'keep-database': { type: 'boolean', default: false },
    // a V8 CPU profile of the gateway, written to bench/results/prof/ when it stops (npx tsx bench/prof-summary.ts)
    'cpu-prof': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
});
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const positive = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) {
    console.error(`--${name} ${v}: a positive number is expected\n${usage}`);
    process.exit(2);
  }
  return n;
};
const seconds = positive('seconds', values.seconds);
const calmSeconds = Number(values.calm);
if (!Number.isFinite(calmSeconds) || calmSeconds < 0) {
  console.error(`--calm ${values.calm}: a number of seconds ≥ 0 is expected\n${usage}`);
  process.exit(2);
}
const normalRate = positive('normal-rate', values['normal-rate']);
const slowEverySeconds = positive('slow-every', values['slow-every']);
const batchWorkers = Math.round(positive('batch-workers', values['batch-workers']));
const idleAddresses = Math.round(positive('idle-addresses', values['idle-addresses']));
const nested3AtS = values['nested3-at'] !== undefined ? Number(values['nested3-at']) : Math.min(30, Math.round(seconds / 3));
const gatewayEnv = Object.fromEntries(values['gateway-env']!.map((kv) => {
  const at = kv.indexOf('=');
  if (at < 1) {
    console.error(`--gateway-env ${kv}: KEY=VALUE expected`);
    process.exit(2);
  }
  return [kv.slice(0, at), kv.slice(at + 1)];
}));
const log = (s: string) => console.log(`soak: ${s}`);
const probes = ['probe', 'stream-probe'];

/** The soft limit of open files of this process (Node cannot raise it: run `ulimit -n` before). */
function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? (m[1] === 'unlimited' ? Infinity : Number(m[1])) : null;
  } catch {
    return null;
  }
}
let slowSockets = Math.round(positive('slow-sockets', values['slow-sockets']));
const fdLimit = openFilesLimit();
if (fdLimit !== null && slowSockets > fdLimit - 1000) {
  const clamped = Math.max(0, fdLimit - 1000);
  log(`the open-files limit is ${fdLimit}: ${slowSockets} slow sockets clamped to ${clamped} (raise it with \`ulimit -n\` before the run)`);
  slowSockets = clamped;
}

/** GET /metrics, streamed: size, series, distinct operation label values, longest label value. */
function readMetrics(base: string): Promise<MetricsFigures> {
  return new Promise((resolve) => {
    const started = performance.now();
    let bytes = 0;
    let series = 0;
    let rest = '';
    let longest = 0;
    const names = new Set<string>();
    const line = (l: string) => {
      if (l === '' || l.startsWith('#')) return;
      series++;
      for (const m of l.matchAll(/\b(operation|operationName)="((?:[^"\\]|\\.)*)"/g)) {
        names.add(m[2]!.length > 200 ? `${m[2]!.slice(0, 200)}…${m[2]!.length}` : m[2]!);
        if (m[2]!.length > longest) longest = m[2]!.length;
      }
    };
    const done = (status: number | null, error?: string) =>
      resolve({ status, bytes, series, operationLabels: names.size, longestLabel: longest, ms: Math.round(performance.now() - started), error });
    const req = http.get(`${base}/metrics`, { timeout: 30_000 }, (res) => {
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => {
        bytes += chunk.length;
        const lines = (rest + chunk).split('\n');
        rest = lines.pop()!;
        lines.forEach(line);
      });
      res.on('end', () => {
        line(rest);
        done(res.statusCode ?? null, res.statusCode === 200 ? undefined : `status ${res.statusCode}`);
      });
      res.on('error', (e) => done(res.statusCode ?? null, e.message));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => done(null, e.code ?? e.message));
  });
}

/** Seconds until `igw_subscriptions_open` sums to 0 once every client has left (polled for 10 s), and the last sum. */
async function subscriptionsBackToZero(base: string): Promise<{ seconds: number | null; open: number | null }> {
  const started = performance.now();
  let open: number | null = null;
  while (performance.now() - started < 10_000) {
    const text = await fetch(`${base}/metrics`).then((r) => r.text(), () => '');
    const values = [...text.matchAll(/^igw_subscriptions_open\{[^}]*\} (\d+)$/gm)].map((m) => Number(m[1]));
    if (values.length > 0) open = values.reduce((a, b) => a + b, 0);
    if (open === 0) return { seconds: Math.round((performance.now() - started) / 100) / 10, open };
    await new Promise((r) => setTimeout(r, 200));
  }
  return { seconds: null, open };
}

// --- everything started here, stopped by cleanup() whatever happens -----------------------------------------
let db: SoakDatabase | null = null;
let gateway: SoakGateway | null = null;
let normalChild: ChildProcess | null = null;
let attacks: Attack[] = [];
let cleaned: Promise<void> | null = null;
let interrupted = false;

function cleanup(): Promise<void> {
  return (cleaned ??= (async () => {
    for (const a of attacks) a.stop();
    if (normalChild && normalChild.exitCode === null && normalChild.signalCode === null) normalChild.kill('SIGKILL');
    if (gateway) await gateway.stop(10_000).catch(() => {});
    if (db && !values['keep-database']) {
      await db.drop().catch((e: unknown) => console.error(`soak: could not drop ${db!.name}: ${String(e)}`));
    } else if (db) {
      log(`kept the database: DATABASE_URL=${db.url}`);
    }
  })());
}

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    interrupted = true;
    console.error(`soak: ${sig}: stopping everything`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function main() {
  const startedAt = new Date();
  const loadBefore = loadAverage();
  log(`creating and seeding a database on ${new URL(values['admin-url']!).host}…`);
  db = await createSeededDatabase(values['admin-url']!);
  const q = postgres(db.url, { max: 1, onnotice: () => {} });
  const ticks = (await q<{ chain: string; protocol: string; tick: string; holders: number }[]>`
    SELECT chain, protocol, tick, holders FROM ticks ORDER BY holders DESC, id LIMIT 20`)
    .map((t) => [t.chain, t.protocol, t.tick, Number(t.holders)] as [string, string, string, number]);
  await q.end({ timeout: 5 });

  let runStart: number | null = null;
  console.log('soak: building dist/ (npm run build)…');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  const profArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resultsDir}prof`] : [];
  gateway = await startGateway(db.url, gatewayEnv, () => runStart, [...values['node-arg']!, ...profArgs]);
  const gw = gateway;
  log(`gateway pid ${gw.pid} on ${gw.base} (database ${db.name}); ${seconds} s of attacks + ${normalRate} normal req/s`);
  const metricsAtStart = await readMetrics(gw.base);

  const rss = sampleRssEverySecond(gw.pid);
  const normalConfig: NormalConfig = {
    base: gw.base, rate: normalRate, seconds, calmSeconds, timeoutMs: 10_000,
    ticks: ticks.slice(0, 10).map(([c, p, t]) => [c, p, t]),
  };
  normalChild = fork(fileURLToPath(new URL('./lib/soak-normal.ts', import.meta.url)), [JSON.stringify(normalConfig)], {
    execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let normalStarted: () => void = () => {};
  const normalStarting = new Promise<void>((r) => { normalStarted = r; });
  const normalDone = new Promise<NormalResult | null>((resolve) => {
    normalChild!.on('message', (m: { started?: boolean; result?: NormalResult; error?: string }) => {
      if (m.started) return normalStarted();
      if (m.error) console.error(`soak: the normal load failed: ${m.error}`);
      resolve(m.result ?? null);
    });
    normalChild!.once('exit', () => resolve(null));
  });
  await Promise.race([normalStarting, normalDone]);

  if (calmSeconds > 0) {
    log(`${calmSeconds} s of normal load alone…`);
    await new Promise((r) => setTimeout(r, calmSeconds * 1000));
  }
  const attackStart = performance.now();
  runStart = attackStart;
  const attackContext = {
    base: gw.base, host: '127.0.0.1', port: gw.port, ticks, nested3AtS,
    slowSockets, slowEveryMs: slowEverySeconds * 1000, batchWorkers, dbUrl: db.url, idleAddresses,
  };
  // the probes measure the gateway: they run in processes of their own (bench/lib/soak-own-process.ts)
  attacks = [...buildAttacks(attackContext), ...protocolAttacks(attackContext)]
    .map((a) => (probes.includes(a.name) ? inOwnProcess(a, attackContext) : a));
  if (values.only) {
    const wanted = values.only.split(',').map((s) => s.trim());
    const unknown = wanted.filter((w) => !attacks.some((a) => a.name === w));
    if (unknown.length) throw new Error(`--only: no attack ${unknown.join(', ')} (attacks: ${attacks.map((a) => a.name).join(', ')})`);
    attacks = attacks.filter((a) => wanted.includes(a.name));
  }
  const running = attacks.map((a) => a.run().catch((e: unknown) => console.error(`soak: attack ${a.name} failed: ${String(e)}`)));

  // progress once every 10 s; the run ends after --seconds, or 3 s after the gateway died
  const progress = setInterval(() => {
    const t = Math.round((performance.now() - runStart!) / 1000);
    const last = rss.samples.at(-1);
    log(`${t} s: RSS ${last ?? 'gone'} MB${gw.exit ? ' (gateway exited)' : ''}`);
  }, 10_000);
  const timeUp = new Promise<'time'>((r) => setTimeout(() => r('time'), seconds * 1000));
  let over = false;
  const why = await Promise.race([timeUp, gw.exited.then(async (e) => {
    if (over || interrupted) return 'exit' as const;
    log(`the gateway exited at ${e.atSecond} s: code ${e.code}, signal ${e.signal}; ending the run in 3 s`);
    await new Promise((r) => setTimeout(r, 3000));
    return 'exit' as const;
  })]);
  over = true;
  clearInterval(progress);
  const ranSeconds = Math.round((performance.now() - runStart) / 100) / 10;
  for (const a of attacks) a.stop();
  if (why === 'exit') normalChild.send('stop');
  await Promise.all(running);
  const subscriptionsDrain = gw.exit ? null : await subscriptionsBackToZero(gw.base);
  const normal = await normalDone;
  const rssFigures = rss.stop();
  const metricsAtEnd = gw.exit ? null : await readMetrics(gw.base);
  const exitDuringRun = gw.exit; // before cleanup() stops it
  await cleanup();

  const partial: Omit<SoakResult, 'verdicts'> = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    label: values.label ?? null,
    settings: {
      seconds, calm: calmSeconds, 'normal-rate': normalRate, 'slow-sockets': slowSockets, 'slow-every': slowEverySeconds,
      'batch-workers': batchWorkers, 'nested3-at': nested3AtS,
      ...(values.only ? { only: values.only } : {}),
      ...(values['gateway-env']!.length ? { 'gateway-env': values['gateway-env']!.join(' ') } : {}),
    },
    machine: { cpus: availableParallelism(), node: process.version, loadBefore, loadAfter: loadAverage(), openFilesLimit: fdLimit },
    gateway: {
      command: `node ${gatewayArgv.join(' ')}`,
      env: { HOST: '127.0.0.1', SEED: 'false', LOG_LEVEL: 'warn', LOG_FORMAT: 'json', ...gatewayEnv },
      pid: gw.pid,
      exited: exitDuringRun !== null,
      exitCode: exitDuringRun?.code ?? null,
      exitSignal: exitDuringRun?.signal ?? null,
      exitedAtS: exitDuringRun?.atSecond ?? null,
      shutdown: gw.shutdown,
      outputTail: gw.outputTail().slice(-8000),
    },
    ranSeconds,
    rss: rssFigures,
    normal,
    attacks: Object.fromEntries(attacks.map((a) => [a.name, { what: a.what, ...a.result() }])),
    metrics: { atStart: metricsAtStart, atEnd: metricsAtEnd },
    subscriptionsDrain,
    targets: soakTargets,
  };
  const result: SoakResult = { ...partial, verdicts: verdicts(partial) };

  mkdirSync(resultsDir, { recursive: true });
  const stamp = `${startedAt.toISOString().slice(0, 16).replace(/[T:]/g, (c) => (c === 'T' ? '-' : ''))}-soak${values.label ? `-${values.label}` : ''}`;
  writeFileSync(`${resultsDir}${stamp}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${resultsDir}${stamp}.md`, soakMarkdown(result));
  console.log('');
  for (const l of summaryLines(result)) console.log(l);
  for (const [name, a] of Object.entries(result.attacks)) {
    if (name === 'small' || name === 'slow-clients' || name === 'reconnecting-slow' || !a.outcomes) continue;
    console.log(`  ${name}: ${a.completed} completed, ${a.unfinishedAtEnd ?? 0} cut at the end; ${Object.entries(a.outcomes as Record<string, number>).map(([k, v]) => `${k} ×${v}`).join(', ')}`);
  }
  log(`wrote bench/results/${stamp}.{json,md}`);
}

main().then(
  () => process.exit(0),
  async (error: unknown) => {
    console.error(error);
    await cleanup();
    process.exit(1);
  },
);

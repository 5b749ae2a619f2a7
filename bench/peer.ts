// npm run bench:peer -- [--database-url URL] [--duration 10] [--connections 8] [--warmup 2] [--pool 10] [--rounds 2]
//                       [--only name,name] [--check]
//
// The gateway side by side with PostGraphile v5 on the same database: for each scenario of
// bench/lib/peer-scenarios.ts (page-1 GraphQL requests of `npm run bench`, each also expressed in PostGraphile's
// schema), the same closed-loop load as `npm run bench` (autocannon, --connections clients, --duration seconds after
// --warmup) on our /graphql and on PostGraphile's, alternating — ours, theirs, ours, theirs (--rounds rounds) — with
// both servers started once and idle while the other is measured. Our response cache is off (as in `npm run bench`).
//
// Before measuring, each side's answer must be a success and both must say the same (the tick, the holders, the
// totals… see peer-scenarios.ts); while measuring, every answer must equal the one seen first (ours: its `data`,
// the freshness extension moves with the clock). CPU per request is read from /proc: each server process and
// its PostgreSQL backends (by application_name). Writes bench/results/<YYYY-MM-DD-HHMM>-postgraphile.{json,md}.
//
// PostGraphile is installed on demand (npm ci in bench/peer/, git-ignored node_modules): it is not a dependency
// of the gateway. --check: install, start both, compare the answers, measure nothing.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { checkReply, repoRoot, startGateway, startServer, type ServerProcess } from './lib/gateway.js';
import { cpuMs, loadAverage, runHttp, sameAnswerAs, type Measurement } from './lib/load.js';
import { answersDiffer, buildPeerScenarios, type PeerScenario } from './lib/peer-scenarios.js';
import { loadOptions, loadSettings, loadUsage, selectedBy } from './lib/cli.js';
import { buildScenarios, loadFixture, resultsDir } from './lib/scenarios.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    ...loadOptions,
    rounds: { type: 'string', default: '2' },
    check: { type: 'boolean', default: false },
  },
  strict: true,
});
if (values.help) {
  console.log(`usage: npm run bench:peer -- ${loadUsage} [--rounds 2] [--check]`);
  process.exit(0);
}

const { databaseUrl, database, seconds, connections, warmupSeconds, poolMax, only } = loadSettings(values);
const rounds = Math.max(1, Number(values.rounds));
const log = (s: string) => console.log(s);

const peerDir = `${repoRoot}bench/peer/`;
/** application_name of each side's PostgreSQL sessions (ours: src/db/client.ts; theirs: bench/peer/server.ts). */
const applicationNames = { ours: 'inscription-gateway', theirs: 'igw-bench-postgraphile' } as const;
type Side = keyof typeof applicationNames;

/** PostGraphile as bench/peer/package-lock.json pins it, installed into bench/peer/node_modules when missing. */
function ensurePeerInstalled(): string {
  const wanted = (JSON.parse(readFileSync(`${peerDir}package.json`, 'utf8')) as { dependencies: Record<string, string> })
    .dependencies.postgraphile!;
  const installedFile = `${peerDir}node_modules/postgraphile/package.json`;
  const installed = () => (existsSync(installedFile) ? (JSON.parse(readFileSync(installedFile, 'utf8')) as { version: string }).version : null);
  if (installed() !== wanted) {
    log(`installing PostGraphile ${wanted} into bench/peer/node_modules (npm ci)…`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: peerDir, stdio: 'inherit' });
  }
  const version = installed();
  if (version !== wanted) throw new Error(`bench/peer: postgraphile ${wanted} wanted, ${version ?? 'none'} installed`);
  return version;
}

async function post(base: string, body: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  return { status: res.status, text: await res.text() };
}

interface Run {
  round: number;
  measurement: Measurement;
  /** CPU ms per request: the server process, its PostgreSQL backends. */
  serverMs: number;
  dbMs: number;
  backends: number;
}

interface SideResult {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  cpu: { serverMs: number | null; dbMs: number | null };
  failures: number;
  replyBytes: number;
  runs: Run[];
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const round1 = (n: number) => Math.round(n * 10) / 10;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function summarise(runs: Run[], replyBytes: number): SideResult {
  const requests = runs.reduce((a, r) => a + r.measurement.requests, 0);
  const secs = runs.reduce((a, r) => a + r.measurement.seconds, 0);
  const serverMs = runs.reduce((a, r) => a + r.serverMs * r.measurement.requests, 0);
  const dbMs = runs.reduce((a, r) => a + r.dbMs * r.measurement.requests, 0);
  return {
    rps: round1(requests / secs),
    requests,
    p50: Math.round(mean(runs.map((r) => r.measurement.p50)) * 100) / 100,
    p99: Math.round(mean(runs.map((r) => r.measurement.p99)) * 100) / 100,
    cpu: { serverMs: requests ? round3(serverMs / requests) : null, dbMs: requests ? round3(dbMs / requests) : null },
    failures: runs.reduce((a, r) => a + r.measurement.failures, 0),
    replyBytes,
    runs,
  };
}

interface PeerResult {
  name: string;
  label: string;
  cheap: boolean;
  ours: SideResult;
  theirs: SideResult;
  /** ours req/s ÷ theirs, over all rounds; and per round. */
  ratio: number;
  ratios: number[];
}

async function main() {
  const postgraphileVersion = ensurePeerInstalled();
  const admin = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const [{ version: pgVersion } = { version: '?' }] = await admin<{ version: string }[]>`SELECT version()`;
  const fixture = await loadFixture(admin, database);
  await admin.end();
  let scenarios = buildPeerScenarios(fixture, buildScenarios(fixture));
  scenarios = scenarios.filter((s) => selectedBy(only, s.name, s.label));
  if (scenarios.length === 0) throw new Error(`--only ${values.only}: no scenario matches`);
  log(`bench:peer: ${scenarios.length} scenarios on ${database} (scale ${fixture.scale ?? '?'}), c=${connections}, ` +
    `${seconds} s each, ${rounds} rounds; PostGraphile ${postgraphileVersion}`);

  const startedAt = new Date();
  const loadBefore = loadAverage();
  const servers: Record<Side, ServerProcess | null> = { ours: null, theirs: null };
  const monitor = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const results: PeerResult[] = [];
  try {
    servers.ours = await startGateway({ databaseUrl, poolMax });
    servers.theirs = await startServer({
      label: 'PostGraphile',
      args: ['--import', 'tsx', 'bench/peer/server.ts'],
      env: { DATABASE_URL: databaseUrl, DB_POOL_MAX: String(poolMax), GRAPHILE_ENV: 'production' },
      probe: async (base) => (await post(base, '{"query":"{ __typename }"}')).status === 200,
    });

    // the answers: a success on each side, the same content on both
    const expected = new Map<string, Record<Side, string>>();
    for (const s of scenarios) {
      const ours = await post(servers.ours.base, s.ours.body);
      checkReply(`ours: ${s.name}`, ours.status, ours.text);
      const theirs = await post(servers.theirs.base, s.theirsBody);
      checkReply(`PostGraphile: ${s.name}`, theirs.status, theirs.text);
      const differ = answersDiffer(s, ours.text, theirs.text);
      if (differ) throw new Error(differ);
      expected.set(s.name, { ours: ours.text, theirs: theirs.text });
      log(`same answer: ${s.name.padEnd(32)} (${s.label})`);
    }
    if (values.check) return;

    const backendsOf = async (side: Side) =>
      (await monitor<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity WHERE application_name = ${applicationNames[side]} AND datname = ${database}`)
        .map((r) => r.pid);
    const measure = async (s: PeerScenario, side: Side, round: number): Promise<Run> => {
      const server = servers[side]!;
      const url = `${server.base}/graphql`;
      const body = side === 'ours' ? s.ours.body : s.theirsBody;
      const verifyBody = sameAnswerAs(expected.get(s.name)![side]);
      if (warmupSeconds > 0) await runHttp({ url, body, connections, seconds: warmupSeconds });
      // backends may come and go with the pool: every one seen before or after counts, from 0 when new
      const before = new Map((await backendsOf(side)).map((pid) => [pid, cpuMs(pid) ?? 0]));
      const nodeBefore = cpuMs(server.child.pid!) ?? 0;
      const m = await runHttp({ url, body, verifyBody, connections, seconds });
      const nodeAfter = cpuMs(server.child.pid!) ?? 0;
      const afterPids = await backendsOf(side);
      let db = 0;
      for (const pid of new Set([...before.keys(), ...afterPids])) {
        const now = cpuMs(pid);
        if (now !== null) db += now - (before.get(pid) ?? 0);
      }
      const n = Math.max(1, m.requests);
      const run = { round, measurement: m, serverMs: round3((nodeAfter - nodeBefore) / n), dbMs: round3(db / n), backends: afterPids.length };
      log(`r${round} ${side.padEnd(6)} ${s.name.padEnd(32)} ${String(Math.round(m.rps)).padStart(6)} req/s  p50 ${m.p50.toFixed(2).padStart(6)}` +
        `  p99 ${m.p99.toFixed(2).padStart(7)} | cpu/req server ${run.serverMs} db ${run.dbMs}` +
        `${m.failures ? ` | ${m.failures} FAILED` : ''}`);
      return run;
    };

    const runs = new Map<string, Record<Side, Run[]>>(scenarios.map((s) => [s.name, { ours: [], theirs: [] }]));
    for (let round = 1; round <= rounds; round++) {
      for (const s of scenarios) {
        for (const side of ['ours', 'theirs'] as const) runs.get(s.name)![side].push(await measure(s, side, round));
      }
    }
    for (const s of scenarios) {
      const r = runs.get(s.name)!;
      const ours = summarise(r.ours, Buffer.byteLength(expected.get(s.name)!.ours));
      const theirs = summarise(r.theirs, Buffer.byteLength(expected.get(s.name)!.theirs));
      results.push({
        name: s.name, label: s.label, cheap: s.cheap, ours, theirs,
        ratio: theirs.rps > 0 ? Math.round((ours.rps / theirs.rps) * 100) / 100 : 0,
        ratios: r.ours.map((o, i) => Math.round((o.measurement.rps / Math.max(0.1, r.theirs[i]!.measurement.rps)) * 100) / 100),
      });
    }
  } finally {
    await monitor.end({ timeout: 5 });
    await Promise.all([servers.ours?.stop(), servers.theirs?.stop()]);
  }

  const result = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    scale: fixture.scale,
    database,
    ours: 'node --max-old-space-size=512 dist/main.js (CACHE=off, LOG_LEVEL=warn), /graphql',
    theirs: `PostGraphile ${postgraphileVersion} (Amber preset, grafserv on node:http; bench/peer/server.ts), /graphql`,
    settings: { connections, seconds, warmupSeconds, poolMax, rounds, order: 'per scenario: ours, theirs, ours, theirs…', cache: 'off' },
    machine: { cpus: availableParallelism(), node: process.version, postgres: pgVersion, loadBefore, loadAfter: loadAverage() },
    target: 'ours ≥ 1.0× theirs (req/s) on every cheap query, median ≥ 1.3× over them; ≥ 5× on the total-heavy ones',
    scenarios: results,
    requests: Object.fromEntries(scenarios.map((s) => [s.name, { ours: JSON.parse(s.ours.body), theirs: JSON.parse(s.theirsBody) }])),
  };
  mkdirSync(resultsDir, { recursive: true });
  const stamp = `${startedAt.toISOString().slice(0, 16).replace(/[T:]/g, (c) => (c === 'T' ? '-' : ''))}-postgraphile`;
  writeFileSync(`${resultsDir}${stamp}.json`, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(`${resultsDir}${stamp}.md`, markdown(result));
  log(`\nwrote bench/results/${stamp}.{json,md}`);
  log(table(results));
  const cheap = results.filter((r) => r.cheap);
  const misses = cheap.filter((r) => r.ratio < 1);
  const heavyMisses = results.filter((r) => !r.cheap && r.ratio < 5);
  const cheapMedian = cheap.length ? median(cheap.map((r) => r.ratio)) : null;
  log(`target ours ≥ 1.0× theirs on every cheap query: ${misses.length === 0 ? 'met' : `missed on ${misses.length} of ${cheap.length} (${misses.map((r) => r.label).join(', ')})`}`);
  log(`target median ≥ 1.3× over the cheap queries: ${cheapMedian === null ? '?' : cheapMedian.toFixed(2)} (${cheapMedian !== null && cheapMedian >= 1.3 ? 'met' : 'missed'})`);
  log(`target ≥ 5× on the total-heavy queries: ${heavyMisses.length === 0 ? 'met' : `missed on ${heavyMisses.map((r) => r.label).join(', ')}`}`);
  const failed = results.filter((r) => r.ours.failures || r.theirs.failures);
  if (failed.length) log(`FAILED ANSWERS (non-2xx, transport errors or a body unlike the first): ${failed.map((r) => `${r.name} (ours ${r.ours.failures}, theirs ${r.theirs.failures})`).join(', ')}`);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number | null) => (n === null ? '?' : n.toFixed(2));

/** The table of the README: one row per scenario. */
function table(results: PeerResult[]): string {
  const rows = results.map((r) =>
    `| ${r.label}${r.cheap ? '' : ' *'} | ${fmt(r.ours.rps)} (${r.ours.runs.map((x) => fmt(x.measurement.rps)).join(' / ')}) | ` +
    `${fmt(r.theirs.rps)} (${r.theirs.runs.map((x) => fmt(x.measurement.rps)).join(' / ')}) | ` +
    `**${r.ratio.toFixed(2)}** (${r.ratios.map((x) => x.toFixed(2)).join(' / ')}) | ${r.ours.p50.toFixed(1)} / ${r.theirs.p50.toFixed(1)} | ` +
    `${r.ours.p99.toFixed(1)} / ${r.theirs.p99.toFixed(1)} | ${ms(r.ours.cpu.serverMs)} / ${ms(r.theirs.cpu.serverMs)} | ` +
    `${ms(r.ours.cpu.dbMs)} / ${ms(r.theirs.cpu.dbMs)} |` +
    `${r.ours.failures || r.theirs.failures ? ` ${r.ours.failures} / ${r.theirs.failures} failed (non-2xx, errors or another body) |` : ''}`);
  return [
    '| query | ours req/s (per round) | PostGraphile req/s (per round) | ratio ours/theirs (per round) | p50 ms ours / theirs | ' +
      'p99 ms ours / theirs | server CPU ms/req ours / theirs | PostgreSQL CPU ms/req ours / theirs |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    '\\* not a cheap query: PostGraphile counts the total (10⁵–10⁶ rows) where the gateway reads a counter.',
  ].join('\n');
}

function markdown(r: {
  startedAt: string; scale: number | null; database: string; ours: string; theirs: string;
  settings: { connections: number; seconds: number; warmupSeconds: number; poolMax: number; rounds: number };
  machine: { cpus: number; node: string; postgres: string; loadBefore: number[]; loadAfter: number[] };
  scenarios: PeerResult[];
}): string {
  const s = r.settings;
  return [
    `# The gateway and PostGraphile side by side — ${r.startedAt.slice(0, 16).replace('T', ' ')} UTC, scale ${r.scale ?? '?'}`,
    '',
    `Database \`${r.database}\`; ${s.connections} connections, ${s.seconds} s per measurement after ${s.warmupSeconds} s of warm-up, ` +
      `${s.rounds} rounds, per scenario ours then theirs in each round; both pools ${s.poolMax}. Ours: ${r.ours}. Theirs: ${r.theirs}.`,
    `Machine: ${r.machine.cpus} CPUs shared with the load generator, Node ${r.machine.node}, ${r.machine.postgres.split(' on ')[0]}; ` +
      `load average ${r.machine.loadBefore.join(' ')} before, ${r.machine.loadAfter.join(' ')} after.`,
    '',
    'req/s over all rounds (each round in brackets); p50/p99: mean of the rounds; CPU: milliseconds per request of each ' +
      'server process and of its PostgreSQL backends (/proc, 10 ms ticks). Targets (issue 28): ours ≥ 1.0× theirs on every cheap query, median ≥ 1.3× over them; ≥ 5× on the total-heavy ones (\\*).',
    '',
    table(r.scenarios),
    '',
  ].join('\n');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

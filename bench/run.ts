// npm run bench -- [--database-url URL] [--url http://127.0.0.1:PORT] [--duration 10] [--connections 8]
//                  [--warmup 2] [--pool 10] [--only name,name] [--plain misses|all|none] [--no-readme] [--cpu-prof]
//
// Runs the fixed mix of bench/lib/scenarios.ts against a gateway on loopback — by default one it starts
// itself (node dist/main.js as npm start runs it, response cache off, LOG_LEVEL=warn) and whose RSS it samples —
// and, for each scenario, the floor: the gateway's own statements straight through postgres.js
// (bench/lib/floor.ts); then, for the scenarios below the throughput target (--plain), the same statements
// behind a plain node:http server (bench/lib/plain.ts), to tell the cost of HTTP from the gateway's own. Writes bench/results/<YYYY-MM-DD-HHMM>-scale<s>.{json,md,svg} and appends a
// one-line summary to bench/README.md's `## Runs` section. Nothing is asserted.
import { mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { chart } from './lib/chart.js';
import { checkReply, startGateway, waitReady } from './lib/gateway.js';
import { captureStatements, floorPool, measureFloor, signature, statementCount, type Capture } from './lib/floor.js';
import { cpuMs, loadAverage, runHttp, sameAnswerAs, sampleRss, type Measurement } from './lib/load.js';
import { measurePlain } from './lib/plain.js';
import { appendReadme, markdown, summaryLine, targets, verdicts, writeJson, type RunResult, type ScenarioResult } from './lib/report.js';
import { loadOptions, loadSettings, loadUsage, selectedBy } from './lib/cli.js';
import { buildScenarios, loadFixture, resultsDir } from './lib/scenarios.js';

const { values } = parseArgs({
  options: {
    ...loadOptions,
    url: { type: 'string' },
    plain: { type: 'string', default: 'misses' },
    'no-readme': { type: 'boolean', default: false },
    'cpu-prof': { type: 'boolean', default: false },
  },
  strict: true,
});
if (values.help) {
  console.log(`usage: npm run bench -- ${loadUsage} [--url http://127.0.0.1:PORT] [--plain misses|all|none] [--no-readme] [--cpu-prof]`);
  process.exit(0);
}

const { databaseUrl, database, seconds, connections, warmupSeconds, poolMax, only } = loadSettings(values);
const log = (s: string) => console.log(s);

async function main() {
  const admin = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  const [{ version } = { version: '?' }] = await admin<{ version: string }[]>`SELECT version()`;
  const fixture = await loadFixture(admin, database);
  await admin.end();
  const scenarios = buildScenarios(fixture).filter((s) => selectedBy(only, s.name));
  if (scenarios.length === 0) throw new Error(`--only ${values.only}: no scenario matches`);
  log(`bench: ${scenarios.length} scenarios on ${database} (scale ${fixture.scale ?? '?'}), c=${connections}, ${seconds} s each`);

  log('capturing the statements of each scenario (in-process gateway)…');
  const captures = await captureStatements(databaseUrl, poolMax, scenarios);
  for (const s of scenarios) {
    const c = captures.get(s.name)!;
    checkReply(s.name, c.status, c.reply);
  }

  const startedAt = new Date();
  const loadBefore = loadAverage();
  const own = values.url
    ? null
    : await startGateway({ databaseUrl, poolMax, cpuProfDir: values['cpu-prof'] ? `${resultsDir}prof` : undefined });
  const base = values.url ?? own!.base;
  if (!own) await waitReady(base, null);
  const rss = own?.child.pid ? sampleRss(own.child.pid) : null;
  const floorSql = floorPool(databaseUrl, poolMax);
  const floors = new Map<string, { floor: Measurement; cpu: { client: number | null; db: number | null } }>();
  // CPU accounting: the gateway process, its PostgreSQL backends, the floor's backends, this process
  const monitor = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  const backendsOf = async (app: string) =>
    (await monitor<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = ${app} AND datname = ${database}`)
      .map((r) => r.pid);
  const cpuOf = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + (cpuMs(pid) ?? 0), 0);
  const perRequest = (ms: number, requests: number) => (requests > 0 ? Math.round((ms / requests) * 1000) / 1000 : null);
  const ownCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const results: ScenarioResult[] = [];
  try {
    // one warm-up pass over every scenario before the first is measured: the JIT has then seen the code all of
    // them share, so the first scenario does not pay for the warming of the rest (rpc getTicks/id did: 3.2× the
    // plain server's CPU against 1.5–1.9 for its neighbours, 2026-11-28 17:12)
    if (warmupSeconds > 0) {
      for (const s of scenarios) await runHttp({ url: `${base}${s.path}`, body: s.body, connections, seconds: warmupSeconds });
    }
    for (const s of scenarios) {
      const capture: Capture = captures.get(s.name)!;
      const url = `${base}${s.path}`;
      const first = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: s.body });
      const reply = await first.text();
      checkReply(s.name, first.status, reply);
      if (warmupSeconds > 0) await runHttp({ url, body: s.body, connections, seconds: warmupSeconds });
      rss?.reset();
      const gatewayBackends = await backendsOf('inscription-gateway');
      const before = { node: own?.child.pid ? cpuMs(own.child.pid) : null, db: cpuOf(gatewayBackends), loadgen: ownCpu() };
      const gateway = await runHttp({ url, body: s.body, verifyBody: sameAnswerAs(reply), connections, seconds });
      const after = { node: own?.child.pid ? cpuMs(own.child.pid) : null, db: cpuOf(gatewayBackends), loadgen: ownCpu() };
      const scenarioRss = rss ? rss.peek() : null;
      const key = signature(capture);
      let measured = floors.get(key);
      if (!measured) {
        const run = await measureFloor(floorSql, capture, connections, seconds, warmupSeconds, async () => {
          const pids = await backendsOf('igw-bench-floor');
          return { pids, db: cpuOf(pids), client: ownCpu() };
        });
        measured = {
          floor: run.measurement,
          cpu: { client: perRequest(run.after.client - run.before.client, run.measurement.requests),
                 db: perRequest(cpuOf(run.before.pids) - run.before.db, run.measurement.requests) },
        };
        floors.set(key, measured);
      }
      // the floor's database CPU at the gateway's rate (floor.ts measureFloor): what the same statements cost
      // PostgreSQL when they come as often as the gateway sends them (the closed loop's figure is kept too)
      const paced = await measureFloor(floorSql, capture, connections, seconds, 0, async () => {
        const pids = await backendsOf('igw-bench-floor');
        return { pids, db: cpuOf(pids) };
      }, gateway.rps);
      const floor = measured.floor;
      const ratio = floor.rps > 0 ? Math.round((gateway.rps / floor.rps) * 100) / 100 : 0;
      const gatewayDbMs = perRequest(after.db - before.db, gateway.requests);
      const floorDbMs = perRequest(cpuOf(paced.before.pids) - paced.before.db, paced.measurement.requests);
      const cpu = {
        gatewayMs: before.node !== null && after.node !== null ? perRequest(after.node - before.node, gateway.requests) : null,
        gatewayDbMs,
        loadgenMs: perRequest(after.loadgen - before.loadgen, gateway.requests),
        floorClientMs: measured.cpu.client,
        floorDbMs,
        floorDbRps: paced.measurement.rps,
        floorDbMsClosed: measured.cpu.db,
        dbRatio: gatewayDbMs !== null && floorDbMs ? Math.round((gatewayDbMs / floorDbMs) * 100) / 100 : null,
      };
      results.push({
        name: s.name, surface: s.surface, kind: s.kind, method: s.method,
        statements: statementCount(capture), waves: capture.waves.length,
        gateway, floor, ratio, cpu, rssMb: scenarioRss, replyBytes: Buffer.byteLength(reply),
      });
      log(`${s.name.padEnd(40)} ${String(Math.round(gateway.rps)).padStart(6)} req/s  p50 ${gateway.p50.toFixed(2).padStart(7)}  ` +
        `p99 ${gateway.p99.toFixed(2).padStart(7)} | floor ${String(Math.round(floor.rps)).padStart(6)} req/s  ` +
        `p50 ${floor.p50.toFixed(2).padStart(7)}  p99 ${floor.p99.toFixed(2).padStart(7)} | ratio ${ratio.toFixed(2)}` +
        ` | cpu/req gw ${cpu.gatewayMs ?? '?'} db ${cpu.gatewayDbMs ?? '?'} vs floor ${cpu.floorClientMs ?? '?'} ` +
        `db ${cpu.floorDbMs ?? '?'} at ${Math.round(cpu.floorDbRps)} req/s (${cpu.floorDbMsClosed ?? '?'} closed), db ratio ${cpu.dbRatio ?? '?'}` +
        `${scenarioRss !== null ? ` | rss ${scenarioRss} MB` : ''}${gateway.failures ? ` | ${gateway.failures} FAILED` : ''}`);
    }
  } finally {
    await monitor.end({ timeout: 5 });
    await floorSql.end({ timeout: 5 });
    if (own) await own.stop();
  }
  const maxRssMb = rss ? rss.stop() : null;

  // calibration: one plain-server run per statement signature among the scenarios it is asked for
  if (values.plain !== 'none') {
    const wanted = results.filter((r) => values.plain === 'all' || r.ratio < targets.ratio);
    const bySignature = new Map<string, { key: string; capture: Capture; body: string }>();
    for (const r of wanted) {
      const capture = captures.get(r.name)!;
      const key = signature(capture);
      if (!bySignature.has(key)) bySignature.set(key, { key: r.name, capture, body: scenarios.find((s) => s.name === r.name)!.body });
    }
    if (bySignature.size > 0) {
      log(`\ncalibration: the same statements behind a plain node:http server (${bySignature.size} statement sequences)…`);
      const measured = await measurePlain({
        databaseUrl, poolMax, connections, seconds, warmupSeconds, entries: [...bySignature.values()], log,
      });
      for (const r of wanted) {
        const entry = bySignature.get(signature(captures.get(r.name)!))!;
        const m = measured.get(entry.key);
        if (m) r.plain = { ...m.plain, cpuMs: m.cpuMs, ratioToFloor: Math.round((m.plain.rps / r.floor.rps) * 100) / 100, measuredAs: entry.key };
      }
    }
  }

  const result: RunResult = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    scale: fixture.scale,
    database,
    gateway: own ? 'child: node --max-old-space-size=512 dist/main.js (CACHE=off, LOG_LEVEL=warn)' : base,
    settings: { connections, seconds, warmupSeconds, poolMax, cache: 'off' },
    machine: { cpus: availableParallelism(), node: process.version, postgres: version, loadBefore, loadAfter: loadAverage() },
    fixture: { ...fixture },
    maxRssMb,
    scenarios: results,
    statements: Object.fromEntries(scenarios.map((s) => [s.name, captures.get(s.name)!.waves])),
  };
  mkdirSync(resultsDir, { recursive: true });
  const stamp = `${startedAt.toISOString().slice(0, 16).replace(/[T:]/g, (c) => (c === 'T' ? '-' : ''))}-scale${fixture.scale ?? 'x'}`;
  writeJson(`${resultsDir}${stamp}.json`, result);
  writeFileSync(`${resultsDir}${stamp}.md`, markdown(result));
  writeFileSync(`${resultsDir}${stamp}.svg`, chart(result));
  log(`\nwrote bench/results/${stamp}.{json,md,svg}`);
  const v = verdicts(result);
  log(`max RSS ${maxRssMb ?? '?'} MB; p99 misses: ${v.p99Misses.map((s) => s.name).join(', ') || 'none'}; ` +
    `ratio misses: ${v.ratioMisses.map((s) => s.name).join(', ') || 'none'}`);
  // a partial run (--only) is recorded in results but does not go into bench/README.md
  if (!values['no-readme'] && !values.only) {
    appendReadme(summaryLine(result, `results/${stamp}.md`),
      '`npm run bench` (`bench/run.ts`) runs every v2 method of the spec and its GraphQL twin for a fixed time at a ' +
      'fixed concurrency against a gateway on loopback (response cache off), and for each the floor: the same SQL ' +
      'statements straight through postgres.js. `npm run bench:explain` writes the plans of those statements ' +
      '(`bench/results/explain-<scale>.txt`). Targets: v2 page 1 p99 ≤ 25 ms, req/s ≥ 0.4× the floor, holders at offset ' +
      '100,000 p99 ≤ 300 ms and at its cursor ≤ 25 ms, gateway RSS ≤ 300 MB. One line per recorded run, newest last; ' +
      'each links its table (the chart is the `.svg` beside it).');
    log('appended the summary to bench/README.md (## Runs)');
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

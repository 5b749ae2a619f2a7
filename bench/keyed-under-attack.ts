// npm run bench:keyed -- [--seconds 60] [--idle-addresses 60] [--only a,b] [--cpu-prof] [--admin-url postgres://postgres@127.0.0.1:5432/postgres]
//
// Does a partner keep its service while anonymous clients attack? The real gateway process (production
// defaults) on a fresh demo database with one API key; anonymous clients from 100+ loopback addresses run the
// stream attacks and the slow-body attacks of the soak (bench/lib/soak-streams.ts, soak-pressure.ts); a keyed
// client on 127.0.0.251 asks a cheap question every 100 ms over a kept-alive connection, and an anonymous
// probe on 127.0.0.250 does the same every 250 ms for comparison; both run in a process of their own, so
// the attackers' thousands of sockets in this one do not delay their measurements. Target: the keyed client's
// answers ≥ 99 % successful, p99 ≤ 100 ms. Writes bench/results/<stamp>-keyed-under-attack.{json,md}.
import { execFileSync, fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { generateKey } from '../src/access/key-format.js';
import { insertApiKey } from '../src/db/api-keys.js';
import { loadAverage } from './lib/load.js';
import { resultsDir } from './lib/scenarios.js';
import type { Attack } from './lib/soak-attacks.js';
import { createSeededDatabase, sampleRssEverySecond, startGateway, type SoakDatabase, type SoakGateway } from './lib/soak-gateway.js';
import { request } from './lib/soak-http.js';
import { pressureAttacks } from './lib/soak-pressure.js';
import { buildStreamAttacks } from './lib/soak-streams.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    'idle-addresses': { type: 'string', default: '60' },
    only: { type: 'string' },
    // a V8 CPU profile of the gateway, written to bench/results/prof/ when it stops (npx tsx bench/prof-summary.ts)
    'cpu-prof': { type: 'boolean', default: false },
    // internal: run the measuring clients (a child of the benchmark)
    clients: { type: 'string' },
    'admin-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
  },
  strict: true,
});
const seconds = Number(values.seconds);
const log = (line: string) => console.log(`keyed: ${line}`);
const percentile = (sorted: number[], p: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!) : null);

/** A cheap JSON-RPC call every `everyMs` from `localAddress` over one kept-alive connection; success % and latency. */
function client(base: string, localAddress: string, everyMs: number, headers: Record<string, string>) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress } as http.AgentOptions);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [['eth']] });
  const ms: number[] = [];
  const failures = new Map<string, number>();
  // when the slow answers came (seconds since the client started): a burst or all along
  const slow: { atS: number; ms: number }[] = [];
  const began = performance.now();
  let sent = 0;
  let stopped = false;
  const run = (async () => {
    while (!stopped) {
      const started = performance.now();
      sent++;
      const o = await request({ url: `${base}/v2/rpc`, body, headers, agent, localAddress, timeoutMs: 5_000 });
      if (o.ms > 100 && slow.length < 200) slow.push({ atS: Math.round((started - began) / 100) / 10, ms: Math.round(o.ms) });
      if (o.status === 200 && o.codes.size === 0) ms.push(o.ms);
      else {
        const why = o.status === null ? o.error ?? 'no answer' : `${o.status} ${[...o.codes.keys()].join(',')}`;
        failures.set(why, (failures.get(why) ?? 0) + 1);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - started))));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await run;
      agent.destroy();
    },
    result() {
      const sorted = [...ms].sort((a, b) => a - b);
      return {
        sent, answered: ms.length, successPercent: sent ? Math.round((ms.length / sent) * 1000) / 10 : null,
        p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99), maxMs: sorted.length ? Math.round(sorted.at(-1)!) : null,
        failures: Object.fromEntries(failures), slow,
      };
    },
  };
}

type ClientResult = ReturnType<ReturnType<typeof client>['result']>;

/** The child: both clients until the parent says stop, then their results over IPC. */
async function runClients(config: { base: string; key: string }) {
  const keyed = client(config.base, '127.0.0.251', 100, { 'x-api-key': config.key });
  const anonymous = client(config.base, '127.0.0.250', 250, {});
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  await Promise.all([keyed.stop(), anonymous.stop()]);
  process.send!({ keyed: keyed.result(), anonymous: anonymous.result() }, () => process.exit(0));
}

/** Starts the clients in a child process; `stop` ends them and resolves with their results. */
function startClients(base: string, key: string) {
  const child = fork(fileURLToPath(import.meta.url), ['--clients', JSON.stringify({ base, key })], { execArgv: ['--import', 'tsx'] });
  const results = new Promise<{ keyed: ClientResult; anonymous: ClientResult }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { keyed: ClientResult; anonymous: ClientResult }));
    child.once('exit', (code) => reject(new Error(`the clients' process exited (${code})`)));
  });
  return { stop: () => (child.send('stop'), results) };
}

let db: SoakDatabase | null = null;
let gateway: SoakGateway | null = null;
let attacks: Attack[] = [];

async function main() {
  const startedAt = new Date();
  const loadBefore = loadAverage();
  db = await createSeededDatabase(values['admin-url']!);
  const q = postgres(db.url, { max: 1, onnotice: () => {} });
  const key = generateKey();
  await insertApiKey(q, { name: 'partner', prefix: key.prefix, secretSha256: key.secretSha256, ratePerS: 1_000, burst: 1_000 });
  const ticks = (await q<{ chain: string; protocol: string; tick: string; holders: number }[]>`
    SELECT chain, protocol, tick, holders FROM ticks ORDER BY holders DESC, id LIMIT 20`)
    .map((t) => [t.chain, t.protocol, t.tick, Number(t.holders)] as [string, string, string, number]);
  await q.end({ timeout: 5 });
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  let runStart: number | null = null;
  const profArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resultsDir}prof`] : [];
  gateway = await startGateway(db.url, {}, () => runStart, profArgs);
  const gw = gateway;
  const rss = sampleRssEverySecond(gw.pid);
  const ctx = {
    base: gw.base, host: '127.0.0.1', port: gw.port, ticks, nested3AtS: 0, slowSockets: 0, slowEveryMs: 5_000, batchWorkers: 0,
    dbUrl: db.url, idleAddresses: Number(values['idle-addresses']),
  };
  attacks = [
    ...buildStreamAttacks(ctx).filter((a) => a.name !== 'stream-probe'),
    ...pressureAttacks(ctx).filter((a) => a.name === 'reconnecting-slow'),
  ].filter((a) => !values.only || values.only.split(',').includes(a.name));
  log(`gateway pid ${gw.pid}; attacks: ${attacks.map((a) => a.name).join(', ')}; ${seconds} s`);
  runStart = performance.now();
  const running = attacks.map((a) => a.run().catch((e: unknown) => console.error(`keyed: attack ${a.name} failed: ${String(e)}`)));
  // the attackers get going first: the clients measure the gateway under attack, not before it
  await new Promise((r) => setTimeout(r, 3_000));
  const clients = startClients(gw.base, key.key);
  await Promise.race([new Promise((r) => setTimeout(r, seconds * 1000)), gw.exited]);
  const measured = await clients.stop();
  for (const a of attacks) a.stop();
  await Promise.all(running);
  const rssFigures = rss.stop();
  const exited = gw.exit;
  const result = {
    startedAt: startedAt.toISOString(), seconds, idleAddresses: ctx.idleAddresses,
    machine: { cpus: availableParallelism(), node: process.version, loadBefore, loadAfter: loadAverage() },
    gatewayExited: exited !== null, rss: rssFigures,
    keyed: measured.keyed, anonymousProbe: measured.anonymous,
    attacks: Object.fromEntries(attacks.map((a) => [a.name, { what: a.what, ...a.result() }])),
    target: 'keyed client: success ≥ 99 %, p99 ≤ 100 ms',
  };
  const k = result.keyed;
  const met = !result.gatewayExited && (k.successPercent ?? 0) >= 99 && (k.p99Ms ?? Infinity) <= 100;
  const stamp = `${startedAt.toISOString().slice(0, 16).replace(/[T:]/g, (c) => (c === 'T' ? '-' : ''))}-keyed-under-attack`;
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(`${resultsDir}${stamp}.json`, `${JSON.stringify(result, null, 2)}\n`);
  const a = result.anonymousProbe;
  const md = [
    `# A keyed client under anonymous attack, ${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '',
    `\`npm run bench:keyed -- --seconds ${seconds} --idle-addresses ${ctx.idleAddresses}\`; ${result.machine.cpus} cores, load before ${loadBefore.join(' ')}, after ${result.machine.loadAfter.join(' ')}.`, '',
    `Attacks (anonymous, 100+ loopback addresses): ${attacks.map((x) => `\`${x.name}\``).join(', ')}.`, '',
    `| client | sent | success | p50 | p99 | max | failures |`, '|---|---|---|---|---|---|---|',
    `| keyed, 127.0.0.251, every 100 ms | ${k.sent} | ${k.successPercent} % | ${k.p50Ms} ms | ${k.p99Ms} ms | ${k.maxMs} ms | ${JSON.stringify(k.failures)} |`,
    `| anonymous, 127.0.0.250, every 250 ms | ${a.sent} | ${a.successPercent} % | ${a.p50Ms} ms | ${a.p99Ms} ms | ${a.maxMs} ms | ${JSON.stringify(a.failures)} |`, '',
    `Both clients ran in a process of their own. Gateway ${result.gatewayExited ? 'EXITED' : 'survived'}; RSS max ${(rssFigures as { maxMb?: number }).maxMb ?? '?'} MB. Target (keyed: ≥ 99 %, p99 ≤ 100 ms): **${met ? 'met' : 'not met'}**.`, '',
  ].join('\n');
  writeFileSync(`${resultsDir}${stamp}.md`, md);
  console.log(md);
}

if (values.clients) {
  void runClients(JSON.parse(values.clients) as { base: string; key: string });
} else main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
}).finally(async () => {
  for (const a of attacks) a.stop();
  await gateway?.stop(10_000).catch(() => {});
  await db?.drop().catch(() => {});
});

// npm run bench:slow -- [--server postgres://postgres@127.0.0.1:5432/postgres] [--one 2000] [--many 6000] [--addresses 100]
//
// Slow clients against the real gateway process, started with the `start` command of package.json (its heap
// limit included) on a fresh database with the demo data: connections sending a byte
// every 5 s, from one address, then spread over many addresses. While they are held, a client on 127.0.0.1
// asks a real question every 250 ms on a new connection. Records what each slow connection got (408 with
// a body, 429, closed on accept), how long the last one was held, whether the probe was served, the
// gateway's open file descriptors and its RSS before, during and after. Writes
// bench/results/slow-clients-<YYYY-MM-DD-HHMM>.json and prints a summary. Nothing is asserted.
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { rssMb } from './lib/load.js';
import { startGatewayProcess } from '../test/support/gateway-process.js';
import { openClient, parseResponse, type RawClient } from '../test/support/sockets.js';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    one: { type: 'string', default: '2000' },
    many: { type: 'string', default: '6000' },
    addresses: { type: 'string', default: '100' },
  },
  strict: true,
});

const root = new URL('..', import.meta.url);
const startCommand = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { scripts: { start: string } }).scripts.start;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fds = (pid: number) => {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
};

const probeBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] });
const probeRequest = `POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\nconnection: close\r\n` +
  `content-length: ${probeBody.length}\r\n\r\n${probeBody}`;

/** One real question on a new connection from 127.0.0.1: true if answered with a result within 5 s. */
async function probe(port: number): Promise<boolean> {
  const client = openClient(port, '127.0.0.1', probeRequest);
  const timer = setTimeout(() => client.destroy(), 5_000);
  const response = parseResponse(await client.closed);
  clearTimeout(timer);
  return response?.status === 200 && Array.isArray(JSON.parse(response.body).result);
}

interface Scenario {
  name: string;
  what: string;
  /** Local address of connection i. */
  address(i: number): string;
  count: number;
  /** First bytes, then one byte every 5 s. */
  first: string;
}

async function run(port: number, pid: number, scenario: Scenario) {
  const rssBefore = rssMb(pid);
  let rssMax = rssBefore ?? 0;
  let fdMax = fds(pid);
  const sampler = setInterval(() => {
    rssMax = Math.max(rssMax, rssMb(pid) ?? 0);
    fdMax = Math.max(fdMax, fds(pid));
  }, 250);
  const probes = { ok: 0, failed: 0 };
  let attacking = true;
  const probing = (async () => {
    while (attacking) {
      if (await probe(port)) probes.ok++;
      else probes.failed++;
      await sleep(250);
    }
  })();

  const started = performance.now();
  const clients: { client: RawClient; closedAt?: number }[] = [];
  for (let i = 0; i < scenario.count; i += 200) {
    const batch = Array.from({ length: Math.min(200, scenario.count - i) }, (_, j) => {
      const client = openClient(port, scenario.address(i + j), scenario.first);
      client.trickle('x', 5_000);
      const entry: { client: RawClient; closedAt?: number } = { client };
      void client.closed.then(() => { entry.closedAt = performance.now(); });
      return entry;
    });
    clients.push(...batch);
    await Promise.all(batch.map((e) => e.client.connected.catch(() => {})));
  }
  const opened = (performance.now() - started) / 1_000;
  const deadline = performance.now() + 120_000;
  while (clients.some((c) => c.closedAt === undefined) && performance.now() < deadline) await sleep(250);
  attacking = false;
  await probing;
  const outcomes: Record<string, number> = {};
  for (const { client } of clients) {
    const data = client.received();
    const response = parseResponse(data);
    const key = response ? `${response.status}${response.body.length > 0 ? ' with a body' : ' empty'}` : data === '' ? 'closed on accept' : 'other';
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  const stillOpen = clients.filter((c) => c.closedAt === undefined).length;
  for (const { client } of clients) client.destroy();
  const lastClosed = Math.max(...clients.map((c) => c.closedAt ?? performance.now()));
  const probesAfter = { ok: 0, failed: 0 };
  for (let i = 0; i < 20; i++) {
    if (await probe(port)) probesAfter.ok++;
    else probesAfter.failed++;
  }
  await sleep(5_000);
  clearInterval(sampler);
  return {
    name: scenario.name,
    what: scenario.what,
    connections: scenario.count,
    secondsToOpen: Math.round(opened * 10) / 10,
    secondsUntilLastClosed: Math.round(((lastClosed - started) / 1_000) * 10) / 10,
    stillOpenAfter120s: stillOpen,
    outcomes,
    probesDuring: probes,
    probesAfter,
    gatewayFdsMax: fdMax,
    rssMb: { before: rssBefore, max: rssMax, fiveSecondsAfter: rssMb(pid) },
  };
}

const admin = postgres(values.server!, { max: 1, onnotice: () => {} });
const name = `igw_slow_${process.pid}`;
await admin.unsafe(`CREATE DATABASE ${name}`);
const url = new URL(values.server!);
url.pathname = `/${name}`;
const addresses = Number(values.addresses);
const results = [];
let gateway: Awaited<ReturnType<typeof startGatewayProcess>> | undefined;
try {
  // LOG_LEVEL info: the start lines tell when it listens; request lines are not written for these (no request completes)
  gateway = await startGatewayProcess({ DATABASE_URL: url.toString(), SEED: 'true', LOG_LEVEL: 'info', CACHE: 'false' }, 120_000,
    { command: startCommand });
  const port = Number(new URL(gateway.base).port);
  const pid = gateway.child.pid!;
  const head = 'POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\n';
  results.push(await run(port, pid, {
    name: 'one address, headers trickled',
    what: 'headers sent a byte every 5 s, all from 127.0.0.2',
    count: Number(values.one),
    address: () => '127.0.0.2',
    first: head,
  }));
  results.push(await run(port, pid, {
    name: 'many addresses, bodies trickled',
    what: `a body of 1000 bytes sent a byte every 5 s, from ${addresses} addresses (127.0.1.x)`,
    count: Number(values.many),
    address: (i) => `127.0.1.${1 + (i % addresses)}`,
    first: `${head}content-length: 1000\r\n\r\n{`,
  }));
} finally {
  await gateway?.stop(10_000);
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
}

const record = { at: new Date().toISOString(), start: startCommand, settings: 'defaults (src/config.ts)', results };
const stamp = record.at.slice(0, 16).replace('T', '-').replace(':', '');
mkdirSync(new URL('bench/results/', root), { recursive: true });
const file = new URL(`bench/results/slow-clients-${stamp}.json`, root);
writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
console.log(JSON.stringify(record, null, 2));
console.log(`written to ${file.pathname}`);

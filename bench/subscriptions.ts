// npm run bench:subscriptions -- [--server postgres://postgres@127.0.0.1:5432/postgres] [--subscriptions 1000]
//                                 [--addresses 40] [--blocks 20] [--every 500]
//
// Live updates under load: the real gateway process (src/main.ts, heap limit 512 MB as `npm start`) on a fresh
// database with the demo data, default limits (but for the pace of new streams: they all open at once). Holds
// `--subscriptions` open SSE subscriptions to `blocks` (spread over `--addresses` loopback addresses, so the
// per-client caps stay at their defaults), then commits `--blocks` new blocks the way the indexer does (one
// transaction each, triggers on), one every `--every` ms. Delivery latency = the time an event is read by the
// client minus the time its COMMIT returned to the writer (same clock). Records the gateway's RSS idle, with the
// subscriptions open, and after the events, the latency p50/p99/max and the events missed. Writes
// bench/results/<YYYY-MM-DD-HHMM>-subscriptions.json. Nothing is asserted.
import { mkdirSync, writeFileSync } from 'node:fs';
import { request, type ClientRequest } from 'node:http';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { percentile, rssMb } from './lib/load.js';
import { startGatewayProcess } from '../test/support/gateway-process.js';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    subscriptions: { type: 'string', default: '1000' },
    addresses: { type: 'string', default: '40' },
    blocks: { type: 'string', default: '20' },
    every: { type: 'string', default: '500' },
  },
  strict: true,
});
const root = new URL('..', import.meta.url);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = Number(values.subscriptions);
const addresses = Number(values.addresses);

interface Subscriber { req: ClientRequest; heights: Map<string, number>; admitted: boolean; errors: number }

/** One subscription over SSE from `localAddress`; each `next` event's height is recorded with its arrival time. */
function subscribe(port: number, localAddress: string, chain: string): Subscriber {
  const sub: Subscriber = { req: null as unknown as ClientRequest, heights: new Map(), admitted: false, errors: 0 };
  const body = JSON.stringify({ query: `subscription { blocks(chains: ["${chain}"]) { chainName height inscriptionCount } }` });
  sub.req = request({
    host: '127.0.0.1', port, localAddress, method: 'POST', path: '/graphql', agent: false,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'content-length': Buffer.byteLength(body) },
  }, (res) => {
    let buffer = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      const now = performance.now();
      sub.admitted = true; // the first bytes are the stream's opening comment
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.+)$/m.exec(message)?.[1];
        if (!/^event: next$/m.test(message) || !data) continue;
        const payload = JSON.parse(data) as { data?: { blocks?: { height: string } }; errors?: unknown[] };
        if (payload.errors) sub.errors += 1;
        else if (payload.data?.blocks) sub.heights.set(payload.data.blocks.height, now);
      }
    });
  });
  sub.req.on('error', () => { sub.errors += 1; });
  sub.req.end(body);
  return sub;
}

const admin = postgres(values.server!, { max: 1, onnotice: () => {} });
const name = `igw_subs_${process.pid}`;
await admin.unsafe(`CREATE DATABASE ${name}`);
const url = new URL(values.server!);
url.pathname = `/${name}`;
let gateway: Awaited<ReturnType<typeof startGatewayProcess>> | undefined;
const writer = postgres(url.toString(), { max: 1, onnotice: () => {} });
let record: Record<string, unknown> = {};
try {
  // (its subscriptions all open at once, a setup step: not paced, SUBSCRIPTIONS_MAX_NEW_PER_S=0, so that delivery is what is measured)
  gateway = await startGatewayProcess({ DATABASE_URL: url.toString(), SEED: 'true', LOG_LEVEL: 'info', CACHE: 'false', SUBSCRIPTIONS_MAX_NEW_PER_S: '0' }, 180_000,
    { nodeArgs: ['--max-old-space-size=512'] });
  const port = Number(new URL(gateway.base).port);
  const pid = gateway.child.pid!;
  await sleep(2_000);
  const chain = (await writer<{ chain: string }[]>`SELECT chain FROM indexed_blocks ORDER BY chain LIMIT 1`)[0]!.chain;
  const rssIdle = rssMb(pid);

  const opening = performance.now();
  const subscribers: Subscriber[] = [];
  for (let i = 0; i < count; i += 100) {
    for (let j = i; j < Math.min(count, i + 100); j++) subscribers.push(subscribe(port, `127.0.2.${1 + (j % addresses)}`, chain));
    await sleep(50);
  }
  while (subscribers.some((s) => !s.admitted) && performance.now() - opening < 60_000) await sleep(100);
  const secondsToOpen = (performance.now() - opening) / 1_000;
  await sleep(2_000);
  const rssOpen = rssMb(pid);

  // one block per transaction, as the indexer commits them: the height moves and the block's transaction lands
  const committed = new Map<string, number>();
  for (let b = 0; b < Number(values.blocks); b++) {
    const height = await writer.begin(async (tx) => {
      const [row] = await tx<{ h: string }[]>`
        UPDATE indexed_blocks SET block_number = block_number + 1, block_time = block_time + interval '2 seconds', indexed_at = now()
         WHERE chain = ${chain} RETURNING block_number::text AS h`;
      await tx`INSERT INTO transactions (chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                 to_address, op, tick, amt, created_at, updated_at)
               VALUES (${chain}, 'bench', ${row!.h}, 0, now(), ${`0xbench${b}`}, '0xfrom', '0xto', 'mint', 'bench', 1, now(), now())`;
      return row!.h;
    });
    committed.set(height, performance.now());
    await sleep(Number(values.every));
  }
  await sleep(3_000);
  const rssAfter = rssMb(pid);

  const latencies: number[] = [];
  let missed = 0;
  for (const s of subscribers) {
    for (const [height, at] of committed) {
      const got = s.heights.get(height);
      if (got === undefined) missed += 1;
      else latencies.push(got - at);
    }
  }
  latencies.sort((a, b) => a - b);
  const round = (v: number) => Math.round(v * 10) / 10;
  for (const s of subscribers) s.req.destroy();
  record = {
    at: new Date().toISOString(),
    gateway: 'node --max-old-space-size=512 --import tsx src/main.ts, defaults (src/config.ts), CACHE=false',
    subscriptions: count,
    admitted: subscribers.filter((s) => s.admitted).length,
    clientAddresses: addresses,
    secondsToOpen: round(secondsToOpen),
    blocks: committed.size,
    everyMs: Number(values.every),
    deliveries: latencies.length,
    missed,
    errorEvents: subscribers.reduce((n, s) => n + s.errors, 0),
    latencyMs: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.at(-1) ?? 0) },
    rssMb: { idle: rssIdle, open: rssOpen, afterEvents: rssAfter },
    perSubscriptionKb: rssIdle !== null && rssOpen !== null ? round(((rssOpen - rssIdle) * 1024) / count) : null,
  };
} finally {
  await writer.end({ timeout: 5 });
  await gateway?.stop(15_000);
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
}

const stamp = String(record.at).slice(0, 16).replace('T', '-').replace(':', '');
mkdirSync(new URL('bench/results/', root), { recursive: true });
const file = new URL(`bench/results/${stamp}-subscriptions.json`, root);
writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
console.log(JSON.stringify(record, null, 2));
console.log(`written to ${file.pathname}`);

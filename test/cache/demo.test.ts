import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { seedDemo } from '../../src/db/seed/index.js';
import { DEMO_NOTABLE } from '../../src/db/seed/demo.js';
import { defaultQuery } from '../../src/graphql/yoga.js';
import { capturingLogger, indexMint, median } from '../support/ops.js';
import { request } from '../support/http.js';
import { type TestGateway, useDatabase, useGateway } from '../support/gateway.js';

// The cache measured on the demo dataset: a mix of the documented JSON-RPC examples (v1 and v2) and
// GraphQL queries. Reports the hit ratio of random draws from that mix (steady, and with an indexer
// writing a block every second) and the median latency of cached and uncached requests, measured in
// adjacent triples per request (miss right after a write, hit, cache off) so that load elsewhere on the
// machine hits all three alike; writes them, with a /metrics sample, to test/artifacts/.

const root = fileURLToPath(new URL('../..', import.meta.url));
const artifacts = join(root, 'test', 'artifacts');
const STEADY = 1_500;
const WITH_WRITES_MS = 6_000;
const LATENCY_ROUNDS = 4;

interface Req { path: string; body: string; label: string }

function workload(addresses: string[]): Req[] {
  const examples = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'documented-all.json'), 'utf8')) as
    { endpoint: string; method: string; params: unknown }[];
  const rpcs = examples.map((e, i) => ({
    path: e.endpoint === '/v1/' ? '/v1/rpc' : '/v2/rpc',
    body: JSON.stringify({ jsonrpc: '2.0', id: i, method: e.method, params: e.params }),
    label: `rpc ${e.method}`,
  }));
  const gql = (query: string, variables: Record<string, unknown> = {}) =>
    ({ path: '/graphql', body: JSON.stringify({ query, variables }), label: 'graphql' });
  const balances = 'query Balances($a: String!) { balances(address: $a, first: 10) { totalCount edges { node { balance tick { chainName protocol tick } } } } }';
  const moves = 'query Moves($a: String!) { addressTransactions(address: $a, first: 10) { totalCount edges { node { txHash amount event } } } }';
  const all = [
    ...rpcs,
    gql(defaultQuery),
    gql('{ chains { chain name latestBlock { number time } } }'),
    ...['ID', 'HOLDERS', 'PROGRESS', 'TX_COUNT'].map((o) => gql(`{ ticks(first: 20, orderBy: ${o}, direction: DESC) { totalCount edges { node { tick stats { holders minted } } } } }`)),
    ...addresses.flatMap((a) => [gql(balances, { a }), gql(moves, { a })]),
  ];
  // the documented examples repeat some requests: each distinct request once
  return [...new Map(all.map((r) => [`${r.path} ${r.body.replace(/"id":\d+,/, '')}`, r])).values()];
}

const log = capturingLogger();
let pool: Req[];

const db = useDatabase({
  load: async (db) => {
    await seedDemo(db.sql);
    const rows = await db.sql<{ address: string }[]>`
      SELECT address FROM balances WHERE balance > 0 GROUP BY address ORDER BY count(*) DESC, address LIMIT 20`;
    pool = workload([DEMO_NOTABLE.busiestAddress, DEMO_NOTABLE.scriptedAddress, ...rows.map((r) => r.address)]);
  },
});
const cached = useGateway({ db, config: { CACHE: true }, logger: log.logger });
const uncached = useGateway({ db, config: { CACHE: false } });

let seq = 0;
async function send(live: TestGateway, req: Req) {
  const id = `demo-${++seq}`;
  const reply = await request(`${live.base}${req.path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': id }, body: req.body,
  });
  return { id, ms: reply.ms, status: reply.status };
}

/** Runs requests one after another (latency without queueing); returns per-outcome client-side times. */
async function run(live: TestGateway, count: number | { untilMs: number }, onTick?: () => Promise<void>) {
  const times: Record<string, number[]> = { hit: [], miss: [], bypass: [] };
  const started = Date.now();
  let n = 0;
  let lastTick = Date.now();
  while (typeof count === 'number' ? n < count : Date.now() - started < count.untilMs) {
    const req = pool[Math.floor(Math.random() * pool.length)]!;
    const { id, ms } = await send(live, req);
    const outcome = outcomeOf(id) ?? 'bypass';
    times[outcome]!.push(ms);
    n++;
    if (onTick && Date.now() - lastTick >= 1_000) {
      lastTick = Date.now();
      await onTick();
    }
  }
  return { n, seconds: (Date.now() - started) / 1000, times };
}

const outcomeOf = (id: string) => [...log.lines].reverse().find((l) => l.reqId === id)?.cache as string | undefined;

/** A write, and the gateway knows of it: every entry is stale. */
async function invalidateAll() {
  await indexMint(db.sql, DEMO_NOTABLE.mostHoldersTick, DEMO_NOTABLE.scriptedAddress, '1');
  await cached.gateway.ops.watcher.refresh();
}

/** Per round: a write (every entry goes stale), then for each request a miss, a hit and a cache-off answer. */
async function latencyTriples() {
  const times: Record<string, number[]> = { hit: [], miss: [], bypass: [] };
  for (let round = 0; round < LATENCY_ROUNDS; round++) {
    await invalidateAll();
    for (const req of [...pool].sort(() => Math.random() - 0.5)) {
      const first = await send(cached, req);
      const second = await send(cached, req);
      const off = await send(uncached, req);
      // requests answered with an error are never stored: they have no hit to compare
      if (outcomeOf(first.id) !== 'miss' || outcomeOf(second.id) !== 'hit') continue;
      times.miss!.push(first.ms);
      times.hit!.push(second.ms);
      times.bypass!.push(off.ms);
    }
  }
  return times;
}

const ratio = (t: Record<string, number[]>) => t.hit!.length / (t.hit!.length + t.miss!.length);
const ms = (values: number[]) => (values.length ? Math.round(median(values) * 100) / 100 : null);

describe('cache on the demo dataset', () => {
  it('measures hit ratio and cached vs uncached latency', async () => {
    // warm-up of the connections and the JIT on both gateways (not counted)
    for (const req of pool) await Promise.all([send(uncached, req), send(cached, req)]);
    const triples = await latencyTriples();
    await invalidateAll();
    const steady = await run(cached, STEADY);
    let blocks = 0;
    const withWrites = await run(cached, { untilMs: WITH_WRITES_MS }, async () => {
      await indexMint(db.sql, DEMO_NOTABLE.mostHoldersTick, DEMO_NOTABLE.busiestAddress, '1');
      blocks++;
    });
    const report = {
      dataset: 'demo (src/db/seed/demo.ts)',
      engine: db.engine,
      distinctRequests: pool.length,
      latency: {
        method: `${LATENCY_ROUNDS} rounds × ${pool.length} requests, each as miss (after a write), hit, and cache off, back to back (requests answered with an error left out)`,
        medianMs: { hit: ms(triples.hit!), miss: ms(triples.miss!), cacheOff: ms(triples.bypass!) },
        samples: { hit: triples.hit!.length, miss: triples.miss!.length, cacheOff: triples.bypass!.length },
      },
      steady: {
        requests: steady.n, hitRatio: Number(ratio(steady.times).toFixed(3)),
        medianMs: { hit: ms(steady.times.hit!), miss: ms(steady.times.miss!) },
      },
      withIndexerWritingOneBlockPerSecond: {
        requests: withWrites.n, blocks, requestsPerSecond: Math.round(withWrites.n / withWrites.seconds),
        hitRatio: Number(ratio(withWrites.times).toFixed(3)),
        medianMs: { hit: ms(withWrites.times.hit!), miss: ms(withWrites.times.miss!) },
      },
    };
    mkdirSync(artifacts, { recursive: true });
    writeFileSync(join(artifacts, 'cache-demo.json'), `${JSON.stringify(report, null, 2)}\n`);
    const scrape = (await request(`${cached.base}/metrics`)).text;
    writeFileSync(join(artifacts, 'metrics-sample.txt'), scrape);
    console.log(`cache on the demo dataset: ${JSON.stringify(report, null, 2)}`);

    expect(report.steady.hitRatio).toBeGreaterThan(0.9);
    expect(report.latency.medianMs.hit!).toBeLessThan(report.latency.medianMs.miss!);
    expect(report.latency.medianMs.hit!).toBeLessThan(report.latency.medianMs.cacheOff!);
    expect(blocks).toBeGreaterThanOrEqual(4);
    expect(report.withIndexerWritingOneBlockPerSecond.hitRatio).toBeGreaterThan(0.3);
  }, 180_000);
});

// The normal load of the soak benchmark: a steady (open-loop) rate of cheap, realistic requests from
// 127.0.0.1 — RPC inds_getTicks page 1, RPC inds_getHoldersByTick page 1 of a popular tick, and a GraphQL
// tick query — whose latencies and failures are what the attacks must not spoil. It runs in its own
// process (bench/soak.ts forks it) so that the attackers' work in the harness never delays its clock.
//
// Input: one JSON argument (NormalConfig); output: one IPC message (NormalResult) when done.
import http from 'node:http';
import { isSuccess, outcomeKey, request } from './soak-http.js';

export interface NormalConfig {
  base: string;
  /** Requests per second, spread evenly. */
  rate: number;
  seconds: number;
  /** [chain, protocol, tick] of the ticks the holder and GraphQL requests pick from. */
  ticks: [string, string, string][];
  timeoutMs: number;
  /** Seconds of normal load alone before the attacks start (figures reported apart as `calm`). */
  calmSeconds: number;
}

export interface LatencyFigures {
  requests: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface NormalResult {
  /** The normal load before the attacks began. */
  calm: LatencyFigures;
  /** From here on: the normal load while the attacks ran. */
  requests: number;
  ok: number;
  errors: number;
  /** Failed requests by outcome (`ERR ECONNREFUSED`, `503 -32000` …). */
  errorKinds: Record<string, number>;
  /** Latencies of all requests (ms), failed ones included, ascending percentiles. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Per request kind: count, p50, p99. */
  byKind: Record<string, { requests: number; errors: number; p50: number; p99: number }>;
  /** Per second since the start (calm seconds first): requests started, failures, slowest (ms). */
  timeline: { s: number; requests: number; errors: number; maxMs: number }[];
}

const tickQuery = `query TickPage($chain: String!, $protocol: String!, $tick: String!) {
  tick(chain: $chain, protocol: $protocol, tick: $tick) {
    name tick totalSupply stats { holders }
    holders(first: 10) { totalCount edges { node { address balance } } }
  }
}`;

function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return Math.round(sorted[rank]! * 100) / 100;
}

let stopRequested = false;

export async function runNormal(c: NormalConfig): Promise<NormalResult> {
  // idle sockets are closed before the gateway's keep-alive timeout (5 s), as a well-behaved client does:
  // otherwise a request sent on a socket the server is closing at that moment fails with ECONNRESET
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
  const latencies: number[] = [];
  const calm: number[] = [];
  let calmErrors = 0;
  const kinds = new Map<string, number[]>();
  const kindErrors = new Map<string, number>();
  const errorKinds: Record<string, number> = {};
  const timeline: NormalResult['timeline'] = [];
  let errors = 0;
  let n = 0;
  const started = performance.now();
  const inflight = new Set<Promise<void>>();

  const one = async (i: number) => {
    const [chain, protocol, tick] = c.ticks[i % c.ticks.length]!;
    const limit = [10, 20, 50][i % 3]!;
    let kind: string;
    let url: string;
    let body: string;
    switch (i % 3) {
      case 0:
        kind = 'rpc inds_getTicks';
        url = `${c.base}/v2/rpc/inds_getTicks`;
        body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'inds_getTicks', params: [limit, 0, '', '', '', '', 3, 2] });
        break;
      case 1:
        kind = 'rpc inds_getHoldersByTick';
        url = `${c.base}/v2/rpc/inds_getHoldersByTick`;
        body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'inds_getHoldersByTick', params: [limit, 0, chain, protocol, tick, 2] });
        break;
      default:
        kind = 'graphql TickPage';
        url = `${c.base}/graphql`;
        body = JSON.stringify({ query: tickQuery, operationName: 'TickPage', variables: { chain, protocol, tick } });
    }
    const t0 = performance.now() - started;
    const isCalm = t0 < c.calmSeconds * 1000;
    const second = Math.floor(t0 / 1000);
    const slot = (timeline[second] ??= { s: second, requests: 0, errors: 0, maxMs: 0 });
    slot.requests++;
    const o = await request({ url, body, agent, localAddress: '127.0.0.1', timeoutMs: c.timeoutMs, maxBytes: 4 << 20 });
    if (o.ms > slot.maxMs) slot.maxMs = Math.round(o.ms * 10) / 10;
    if (isCalm) {
      calm.push(o.ms);
      if (!isSuccess(o)) {
        calmErrors++;
        slot.errors++;
      }
      return;
    }
    latencies.push(o.ms);
    if (!kinds.has(kind)) kinds.set(kind, []);
    kinds.get(kind)!.push(o.ms);
    if (!isSuccess(o)) {
      errors++;
      slot.errors++;
      kindErrors.set(kind, (kindErrors.get(kind) ?? 0) + 1);
      const key = outcomeKey(o);
      errorKinds[key] = (errorKinds[key] ?? 0) + 1;
    }
  };

  process.send?.({ started: true }); // the harness times the calm phase from here
  const interval = 1000 / c.rate;
  const end = started + (c.calmSeconds + c.seconds) * 1000;
  for (;;) {
    const due = started + n * interval;
    if (due >= end || stopRequested) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const p = one(n++).finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  agent.destroy();
  for (let s = 0; s < timeline.length; s++) timeline[s] ??= { s, requests: 0, errors: 0, maxMs: 0 };

  const sorted = [...latencies].sort((a, b) => a - b);
  const calmSorted = [...calm].sort((a, b) => a - b);
  const byKind: NormalResult['byKind'] = {};
  for (const [kind, ms] of kinds) {
    const s = [...ms].sort((a, b) => a - b);
    byKind[kind] = { requests: s.length, errors: kindErrors.get(kind) ?? 0, p50: pct(s, 50), p99: pct(s, 99) };
  }
  return {
    calm: {
      requests: calm.length, errors: calmErrors,
      p50: pct(calmSorted, 50), p90: pct(calmSorted, 90), p99: pct(calmSorted, 99), max: pct(calmSorted, 100),
    },
    requests: latencies.length, ok: latencies.length - errors, errors, errorKinds,
    p50: pct(sorted, 50), p90: pct(sorted, 90), p99: pct(sorted, 99), max: pct(sorted, 100),
    byKind, timeline,
  };
}

// forked by bench/soak.ts
if (process.send && process.argv[2]) {
  const config = JSON.parse(process.argv[2]) as NormalConfig;
  // the harness ends the run early when the gateway died
  process.on('message', (m) => {
    if (m === 'stop') stopRequested = true;
  });
  runNormal(config).then(
    (result) => process.send!({ result }, () => process.exit(0)),
    (error: unknown) => process.send!({ error: String(error) }, () => process.exit(1)),
  );
}

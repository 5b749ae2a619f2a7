// The pressure attacks of issue 23 for the soak benchmark (bench/soak.ts), each from addresses of its own,
// and the probe they are judged by: a cheap request every 250 ms from yet another address (127.0.0.250),
// answered ≥ 99 % with p99 ≤ 500 ms is the target.
//   reconnecting-slow   slow bodies from 70 addresses (127.0.0.10–79) × 60 each, each reopened 50 ms after it is cut
//   heavy-16            16 addresses (127.0.1.1–16) each pulling large legal answers back to back
//   atblock-deep        8 clients of one address: 15 aliases × holders(atBlock, offset ≈ 30,000, totalCount), and offset 2^31-1
//   rpc-batch-limit     a batch of 100 × inds_getTransactions with limit 1000, back to back
import http from 'node:http';
import net from 'node:net';
import { outcomeKey, request, Tally } from './soak-http.js';
import type { Attack, AttackContext } from './soak-attack.js';
import { Clock } from './soak-clock.js';

const percentile = (sorted: number[], p: number) => (sorted.length ? Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!) : null);

/** Workers sending requests back to back from their addresses; outcomes tallied. */
function loop(name: string, what: string, ctx: AttackContext, opts: {
  addresses: string[]; perAddress: number; pauseMs: number;
  next: (i: number) => { path: string; body: string } | Promise<{ path: string; body: string }>;
}): Attack {
  const stop = new Clock();
  const tally = new Tally();
  const agents = opts.addresses.map((localAddress) => new http.Agent({ keepAlive: true, localAddress } as http.AgentOptions));
  let bytes = 0;
  let i = 0;
  return {
    name, what,
    async run() {
      await Promise.all(opts.addresses.flatMap((localAddress, a) => Array.from({ length: opts.perAddress }, async () => {
        while (!stop.stopped) {
          const { path, body } = await opts.next(i++);
          const o = await request({ url: `${ctx.base}${path}`, body, agent: agents[a], localAddress, timeoutMs: 60_000 });
          if (stop.stopped && o.status === null) break;
          tally.add(outcomeKey(o), o.bytes, o.ms);
          bytes += o.bytes;
          await stop.sleep(o.status === null || o.status === 429 ? Math.max(opts.pauseMs, 250) : opts.pauseMs);
        }
      })));
    },
    stop() {
      stop.stop();
      for (const agent of agents) agent.destroy();
    },
    result: () => ({ ...tally.toJSON(), bytesServed: bytes }),
  };
}

/** A cheap request every 250 ms from 127.0.0.250: the figure the pressure attacks are judged by. */
function probe(ctx: AttackContext): Attack {
  const stop = new Clock();
  const tally = new Tally();
  const ms: number[] = [];
  let answered = 0;
  let sent = 0;
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [['eth']] });
  const late: { atS: number; ms: number; outcome: string }[] = [];
  return {
    name: 'probe',
    what: 'a cheap inds_getAllChains every 250 ms from 127.0.0.250 (a fresh connection each time): target answered ≥ 99 %, p99 ≤ 500 ms',
    async run() {
      // open loop: one every 250 ms whether or not the previous one was answered (a stalled gateway shows as
      // timeouts, not as fewer probes)
      const inFlight = new Set<Promise<void>>();
      const started = performance.now();
      while (!stop.stopped) {
        sent++;
        const at = Math.round((performance.now() - started) / 100) / 10;
        const one = request({ url: `${ctx.base}/v2/rpc`, body, headers: { connection: 'close' }, localAddress: '127.0.0.250', timeoutMs: 10_000 })
          .then((o) => {
            tally.add(outcomeKey(o), o.bytes, o.ms);
            const ok = o.status === 200 && o.codes.size === 0;
            // when the probe was late or unanswered: the ramp of the attacks, or all along
            if (!ok || o.ms > 500) late.push({ atS: at, ms: Math.round(o.ms), outcome: outcomeKey(o) });
            if (ok) {
              answered++;
              ms.push(o.ms);
            }
          });
        inFlight.add(one);
        void one.finally(() => inFlight.delete(one));
        await stop.sleep(250);
      }
      await Promise.all(inFlight);
    },
    stop: () => stop.stop(),
    result: () => {
      const sorted = [...ms].sort((a, b) => a - b);
      return {
        ...tally.toJSON(), sent, answered, answeredPercent: sent ? Math.round((answered / sent) * 1000) / 10 : null, p50Ms: percentile(sorted, 0.5), p99Ms: percentile(sorted, 0.99),
        late: late.slice(0, 200),
      };
    },
  };
}

/** Slow bodies from 70 addresses × 60, each reopened 50 ms after the gateway cuts it. */
function reconnectingSlow(ctx: AttackContext): Attack {
  const stop = new Clock();
  const sockets = new Set<net.Socket>();
  let opened = 0;
  let cut = 0;
  let maxOpen = 0;
  const statuses = new Map<string, number>();
  let ticker: NodeJS.Timeout | undefined;
  const open = (localAddress: string) => {
    if (stop.stopped) return;
    const socket = net.connect({ host: ctx.host, port: ctx.port, localAddress });
    opened++;
    let answered = false;
    socket.on('connect', () => {
      sockets.add(socket);
      if (sockets.size > maxOpen) maxOpen = sockets.size;
      socket.write(`POST /v2/rpc HTTP/1.1\r\nHost: ${ctx.host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`);
    });
    socket.on('data', (chunk: Buffer) => {
      if (answered) return;
      answered = true;
      const line = chunk.toString('latin1').split('\r\n')[0]!.slice(0, 30);
      statuses.set(line, (statuses.get(line) ?? 0) + 1);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (stop.stopped) return;
      cut++;
      setTimeout(() => open(localAddress), 50).unref();
    });
  };
  return {
    name: 'reconnecting-slow',
    what: 'slow bodies (Content-Length 100000, a byte per socket every 2 s) from 70 addresses (127.0.0.10–79) × 60 each, each reopened 50 ms after it is cut',
    async run() {
      ticker = setInterval(() => { for (const s of sockets) if (s.writable) s.write(' '); }, 2_000);
      for (let a = 0; a < 70 && !stop.stopped; a++) {
        for (let k = 0; k < 60; k++) open(`127.0.0.${10 + a}`);
        await stop.sleep(20);
      }
      await stop.sleep(24 * 3600 * 1000);
    },
    stop() {
      stop.stop();
      clearInterval(ticker);
      for (const s of sockets) s.destroy();
    },
    result: () => ({ wanted: 4200, opened, cutByGateway: cut, maxOpen, firstLines: Object.fromEntries(statuses) }),
  };
}

export function pressureAttacks(ctx: AttackContext): Attack[] {
  const [chain, protocol, tick] = ctx.ticks[0]!;
  // a legal large answer: 100 × a 1000-row holders page (the row budget answers about 20 of them, ~2–5 MB)
  const bigBatch = JSON.stringify(Array.from({ length: 100 }, (_, k) => {
    const [c, p, t] = ctx.ticks[k % Math.min(ctx.ticks.length, 12)]!;
    return { jsonrpc: '2.0', id: k, method: 'inds_getHoldersByTick', params: [1000, k % 7, c, p, t, 1 + (k % 2)] };
  }));
  let height: string | null = null;
  const heightOf = async () => {
    if (height !== null) return height;
    const o = await request({ url: `${ctx.base}/graphql`, body: JSON.stringify({ query: '{ __typename }' }), timeoutMs: 10_000 });
    // the chain's indexed height, from the answer's freshness extension
    height = new RegExp(`"${chain}":"?(\\d+)`).exec(o.head)?.[1] ?? '1';
    return height;
  };
  const deepAliases = (h: string, offset: (i: number) => number, aliases = 15) =>
    `{ tick(chain: "${chain}", protocol: "${protocol}", tick: "${tick}") { ${Array.from({ length: aliases }, (_, i) =>
      `a${i}: holders(atBlock: "${h}", first: 10, offset: ${offset(i)}) { totalCount edges { node { address balance } } }`).join(' ')} } }`;
  return [
    probe(ctx),
    reconnectingSlow(ctx),
    loop('heavy-16', '16 addresses (127.0.1.1–16), one client each, back to back: 100-element batches of 1000-row holder pages (legal, ~2–5 MB each)', ctx, {
      addresses: Array.from({ length: 16 }, (_, i) => `127.0.1.${i + 1}`), perAddress: 1, pauseMs: 0,
      next: () => ({ path: '/v2/rpc', body: bigBatch }),
    }),
    loop('atblock-deep', '8 clients of 127.0.0.4: 15 aliases × holders(atBlock, offset 30,000 + i, totalCount), every 4th request offset 2147483647 (one alias)', ctx, {
      addresses: ['127.0.0.4'], perAddress: 8, pauseMs: 0,
      next: async (i) => {
        const h = await heightOf();
        const query = i % 4 === 3 ? deepAliases(h, () => 2_147_483_647, 1) : deepAliases(h, (k) => 30_000 + k);
        return { path: '/graphql', body: JSON.stringify({ query }) };
      },
    }),
    loop('rpc-batch-limit', 'one client of 127.0.0.5: a batch of 100 × inds_getTransactions(limit 1000), back to back (1 s pause)', ctx, {
      addresses: ['127.0.0.5'], perAddress: 1, pauseMs: 1_000,
      next: () => ({
        path: '/v2/rpc',
        body: JSON.stringify(Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'inds_getTransactions', params: [1000, id * 10, '', '', '', '', 1] }))),
      }),
    }),
  ];
}

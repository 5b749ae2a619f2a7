// The attacks of the soak benchmark (issue "No request may stall or kill the gateway"), all sent from a
// second loopback address (127.0.0.2) so that they are told apart from the normal load (127.0.0.1).
// Each one loops until stopped and tallies its outcomes by HTTP status and error code (soak-http.ts).
import type { Attack, AttackContext } from './soak-attack.js';
import http from 'node:http';
import net from 'node:net';
import { outcomeKey, rawExchange, request, Tally, type Outcome } from './soak-http.js';
import { buildStreamAttacks } from './soak-streams.js';
import { pressureAttacks } from './soak-pressure.js';
import { Clock } from './soak-clock.js';

const attackerAddress = '127.0.0.2';


// --- 1, 2: variables that bypass the cost limit (the cost estimate counts `first: $n` as 1) -----------------
/** ticks → holders → tick → holders: two levels of holders under the tick list (106 MB on the demo data, unfixed). */
const nested2 = `query Nested2($n: Int) { ticks(first: $n) { edges { node { holders(first: $n) { edges { node {
  address balance tick { holders(first: $n) { edges { node { address } } } } } } } } } } }`;
/** One more tick → holders level (killed the unfixed gateway: heap out of memory). */
const nested3 = `query Nested3($n: Int) { ticks(first: $n) { edges { node { holders(first: $n) { edges { node {
  address balance tick { holders(first: $n) { edges { node { address tick { holders(first: $n) { edges { node { address } } } } } } } } } } } } } } }`;

const attackTimeoutMs = 60_000;

/** A loop of one request at a time, `pauseMs` apart, whose outcomes are tallied. */
function loopAttack(name: string, what: string, opts: {
  workers?: number;
  firstDelayMs?: (worker: number) => number;
  pauseMs: number;
  next: (i: number, worker: number) => { path: string; body: string; headers?: Record<string, string> };
  timeoutMs?: number;
  extra?: () => Record<string, unknown>;
  onOutcome?: (o: Outcome) => void;
}, ctx: AttackContext): Attack {
  const clock = new Clock();
  const agent = new http.Agent({ keepAlive: true, localAddress: attackerAddress } as http.AgentOptions);
  const tally = new Tally();
  let unfinished = 0;
  let i = 0;
  return {
    name, what,
    async run() {
      await Promise.all(Array.from({ length: opts.workers ?? 1 }, async (_, worker) => {
        await clock.sleep(opts.firstDelayMs?.(worker) ?? 0);
        while (!clock.stopped) {
          const { path, body, headers } = opts.next(i++, worker);
          const o = await request({ url: `${ctx.base}${path}`, body, headers, agent, localAddress: attackerAddress, timeoutMs: opts.timeoutMs ?? attackTimeoutMs });
          if (clock.stopped && (o.error || o.status === null)) {
            unfinished++;
            break;
          }
          tally.add(outcomeKey(o), o.bytes, o.ms);
          opts.onOutcome?.(o);
          // no connection (the gateway is gone): do not spin
          await clock.sleep(o.status === null ? Math.max(opts.pauseMs, 250) : opts.pauseMs);
        }
      }));
    },
    stop() {
      clock.stop();
      agent.destroy();
    },
    result: () => ({ ...tally.toJSON(), unfinishedAtEnd: unfinished, ...opts.extra?.() }),
  };
}

export type { Attack, AttackContext };

export function buildAttacks(ctx: AttackContext): Attack[] {
  const gql = (query: string, variables: Record<string, unknown>, operationName?: string) =>
    JSON.stringify({ query, variables, ...(operationName ? { operationName } : {}) });
  const attacks: Attack[] = [];

  attacks.push(loopAttack('nested-2-levels',
    'GraphQL ticks→holders→tick→holders with first: $n, {"n":1000}; one client, back to back (1 s pause)',
    { pauseMs: 1000, next: () => ({ path: '/graphql', body: gql(nested2, { n: 1000 }, 'Nested2') }) }, ctx));

  attacks.push(loopAttack('nested-3-levels',
    `GraphQL ticks→holders→tick→holders→tick→holders with {"n":1000}; first at ${ctx.nested3AtS} s, then every 20 s`,
    { firstDelayMs: () => ctx.nested3AtS * 1000, pauseMs: 20_000, next: () => ({ path: '/graphql', body: gql(nested3, { n: 1000 }, 'Nested3') }) }, ctx));

  const distinctN = [1000, 999, 998, 997, 996, 995, 994, 993];
  attacks.push(loopAttack('cache-fill',
    'three clients, each sending the two-level document every 15 s with one of 8 distinct $n (993–1000): distinct huge answers for the response cache',
    {
      workers: 3, firstDelayMs: (w) => w * 5000, pauseMs: 15_000,
      next: (i) => ({ path: '/graphql', body: gql(nested2, { n: distinctN[i % distinctN.length] }, 'Nested2') }),
    }, ctx));

  // 3: 100-element batches of 1000-row holder pages, offsets drawn so that most pages are distinct
  const big = ctx.ticks.slice(0, 12);
  attacks.push(loopAttack('rpc-batches',
    `${ctx.batchWorkers} clients in parallel, back to back: 100-element JSON-RPC batches of inds_getHoldersByTick 1000-row pages (top 12 ticks, random offsets)`,
    {
      workers: ctx.batchWorkers, pauseMs: 0,
      next: (i) => ({
        path: '/v2/rpc/inds_getHoldersByTick',
        body: JSON.stringify(Array.from({ length: 100 }, (_, k) => {
          const [chain, protocol, tick, holders] = big[(i * 7 + k) % big.length]!;
          const offset = Math.floor(Math.random() * Math.max(1, Math.min(holders - 900, 500)));
          return { jsonrpc: '2.0', id: k, method: 'inds_getHoldersByTick', params: [1000, offset, chain, protocol, tick, 1 + (k % 2)] };
        })),
      }),
    }, ctx));

  // 5: thousands of distinct operation names, every 20th 20,000 characters long
  let longNames = 0;
  attacks.push(loopAttack('operation-names',
    'two clients, each one request every 20 ms at most: `query <name> { __typename }` with a new name each time, every 20th name 20,000 characters',
    {
      workers: 2, pauseMs: 20, timeoutMs: 15_000,
      next: (i) => {
        const long = i % 20 === 19;
        if (long) longNames++;
        const name = long ? `L${i}_${'x'.repeat(20_000 - 2 - String(i).length)}` : `Soak_${i}_${Math.random().toString(36).slice(2, 8)}`;
        return { path: '/graphql', body: JSON.stringify({ query: `query ${name} { __typename }`, operationName: name }) };
      },
      extra: () => ({ longNames }),
    }, ctx));

  attacks.push(smallProbes(ctx));
  attacks.push(slowClients(ctx));
  attacks.push(...buildStreamAttacks(ctx));
  // issue 23: the connection table, shedding by cost, history scans, client limits; and the probe from another address
  attacks.push(...pressureAttacks(ctx));
  return attacks;
}

// --- 6: small ones -------------------------------------------------------------------------------------------
function smallProbes(ctx: AttackContext): Attack {
  const clock = new Clock();
  const tallies = new Map<string, Tally>();
  const record = (probe: string, key: string, bytes = 0, ms = 0) => {
    if (!tallies.has(probe)) tallies.set(probe, new Tally());
    tallies.get(probe)!.add(key, bytes, ms);
  };
  const cors = (o: Outcome) =>
    ` acao=${o.headers['access-control-allow-origin'] ?? '-'} acac=${o.headers['access-control-allow-credentials'] ?? '-'}`;
  const withCredentials = { origin: 'https://evil.example', cookie: 'session=0123456789abcdef', authorization: 'Bearer soak-token' };
  const host = ctx.host;
  const rpcBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [5, 0, '', '', '', '', 3, 2] });
  const probes: [string, () => Promise<void>][] = [
    ['origin-with-credentials graphql', async () => {
      const o = await request({ url: `${ctx.base}/graphql`, headers: withCredentials, body: JSON.stringify({ query: '{ __typename }' }), localAddress: attackerAddress, timeoutMs: 10_000 });
      record('origin-with-credentials graphql', outcomeKey(o) + cors(o), o.bytes, o.ms);
    }],
    ['origin-with-credentials rpc', async () => {
      const o = await request({ url: `${ctx.base}/v2/rpc/inds_getTicks`, headers: withCredentials, body: rpcBody, localAddress: attackerAddress, timeoutMs: 10_000 });
      record('origin-with-credentials rpc', outcomeKey(o) + cors(o), o.bytes, o.ms);
    }],
    ['cors-preflight with credentials', async () => {
      const o = await request({
        url: `${ctx.base}/graphql`, method: 'OPTIONS', localAddress: attackerAddress, timeoutMs: 10_000,
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
      });
      record('cors-preflight with credentials', outcomeKey(o) + cors(o), o.bytes, o.ms);
    }],
    ['nul-cursor graphql', async () => {
      const cursors = ['\u0000', 'YWJj\u0000ZGVm', Buffer.from('holder:\u0000').toString('base64')];
      const after = cursors[Math.floor(Math.random() * cursors.length)]!;
      const o = await request({ url: `${ctx.base}/graphql`, body: JSON.stringify({ query: 'query C($a: String) { ticks(first: 5, after: $a) { edges { cursor } } }', variables: { a: after } }), localAddress: attackerAddress, timeoutMs: 10_000 });
      record('nul-cursor graphql', outcomeKey(o), o.bytes, o.ms);
    }],
    ['nul-param rpc', async () => {
      const o = await request({ url: `${ctx.base}/v2/rpc/inds_getHoldersByTick`, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [10, 0, 'btc', 'brc-20', 'sa\u0000ts', 2] }), localAddress: attackerAddress, timeoutMs: 10_000 });
      record('nul-param rpc', outcomeKey(o), o.bytes, o.ms);
    }],
    ['no-host HTTP/1.1', async () => {
      const r = await rawExchange(host, ctx.port, `POST /v2/rpc HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${rpcBody.length}\r\nConnection: close\r\n\r\n${rpcBody}`, attackerAddress, 10_000);
      record('no-host HTTP/1.1', r.statusLine ?? `ERR ${r.error}`, 0, r.ms);
    }],
    ['no-host HTTP/1.0', async () => {
      const r = await rawExchange(host, ctx.port, `POST /graphql HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n{"query":"{__typename}"}`, attackerAddress, 10_000);
      record('no-host HTTP/1.0', r.statusLine ?? `ERR ${r.error}`, 0, r.ms);
    }],
  ];
  let i = 0;
  return {
    name: 'small',
    what: 'one probe every 250 ms in turn: Origin + Cookie + Authorization on both surfaces and a CORS preflight (the CORS headers answered are recorded), NUL in a cursor and in an RPC param, requests without Host (HTTP/1.1 and 1.0)',
    async run() {
      while (!clock.stopped) {
        const [, probe] = probes[i++ % probes.length]!;
        await probe();
        await clock.sleep(250);
      }
    },
    stop: () => clock.stop(),
    result: () => Object.fromEntries([...tallies.entries()].map(([k, t]) => [k, t.toJSON()])),
  };
}

// --- 4: slow clients ------------------------------------------------------------------------------------------
interface SlowSocket {
  socket: net.Socket;
  openedAt: number;
  nextAt: number;
  kind: 'body' | 'headers';
  answered: boolean;
}

function slowClients(ctx: AttackContext): Attack {
  const clock = new Clock();
  const live = new Set<SlowSocket>();
  const connectErrors = new Map<string, number>();
  const replies = new Map<string, number>();
  const lifetimesS: number[] = [];
  let opened = 0;
  let connected = 0;
  let maxOpen = 0;
  let closedByServer = 0;
  let bytesSent = 0;
  let serial = 0;
  let openAtEnd = 0;
  let pendingAtEnd = 0;
  const connecting = new Set<net.Socket>();
  let ticker: NodeJS.Timeout | undefined;

  const open = () => {
    if (clock.stopped) return;
    const n = serial++;
    const kind: SlowSocket['kind'] = n % 5 === 4 ? 'headers' : 'body';
    const socket = net.connect({ host: ctx.host, port: ctx.port, localAddress: attackerAddress });
    connecting.add(socket);
    const s: SlowSocket = { socket, openedAt: performance.now(), nextAt: 0, kind, answered: false };
    opened++;
    let wasConnected = false;
    socket.setNoDelay(true);
    socket.on('connect', () => {
      connecting.delete(socket);
      wasConnected = true;
      connected++;
      live.add(s);
      if (live.size > maxOpen) maxOpen = live.size;
      const path = n % 2 ? '/graphql' : '/v2/rpc/inds_getTicks';
      socket.write(kind === 'body'
        ? `POST ${path} HTTP/1.1\r\nHost: ${ctx.host}:${ctx.port}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`
        : `GET /healthz HTTP/1.1\r\nHost: ${ctx.host}:${ctx.port}\r\nX-Slow: `);
      s.nextAt = performance.now() + ctx.slowEveryMs * (0.5 + Math.random());
    });
    socket.on('data', (chunk: Buffer) => {
      if (s.answered) return;
      s.answered = true;
      const line = chunk.toString('latin1').split('\r\n')[0]!.slice(0, 40);
      replies.set(line, (replies.get(line) ?? 0) + 1);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!wasConnected && !clock.stopped) connectErrors.set(e.code ?? e.message, (connectErrors.get(e.code ?? e.message) ?? 0) + 1);
    });
    socket.on('close', () => {
      connecting.delete(socket);
      live.delete(s);
      if (clock.stopped) return;
      if (wasConnected) {
        closedByServer++;
        lifetimesS.push((performance.now() - s.openedAt) / 1000);
      }
      // keep the pressure: a closed slot is opened again a second later
      setTimeout(open, 1000).unref();
    });
  };

  return {
    name: 'slow-clients',
    what: `${ctx.slowSockets} connections (4/5 a POST with Content-Length 100000 and its body one byte at a time, 1/5 a header one byte at a time), one byte per socket every ~${ctx.slowEveryMs / 1000} s; a closed one is reopened 1 s later`,
    async run() {
      ticker = setInterval(() => {
        const now = performance.now();
        for (const s of live) {
          if (s.nextAt <= now && s.socket.writable) {
            s.socket.write(s.kind === 'body' ? ' ' : 'a');
            bytesSent++;
            s.nextAt = now + ctx.slowEveryMs;
          }
        }
      }, 250);
      // ramp up: 250 new connections per 100 ms
      for (let k = 0; k < ctx.slowSockets && !clock.stopped; k++) {
        open();
        if (k % 250 === 249) await clock.sleep(100);
      }
      await clock.sleep(24 * 3600 * 1000);
    },
    stop() {
      if (clock.stopped) return;
      clock.stop();
      clearInterval(ticker);
      openAtEnd = live.size;
      pendingAtEnd = connecting.size;
      for (const s of live) s.socket.destroy();
      for (const socket of connecting) socket.destroy();
    },
    result: () => {
      const sorted = [...lifetimesS].sort((a, b) => a - b);
      return {
        wanted: ctx.slowSockets,
        opened, connected, maxOpen, openAtEnd, pendingAtEnd,
        closedByServer,
        lifetimeS: sorted.length ? { min: Math.round(sorted[0]! * 10) / 10, median: Math.round(sorted[Math.floor(sorted.length / 2)]! * 10) / 10, max: Math.round(sorted.at(-1)! * 10) / 10 } : null,
        replies: Object.fromEntries(replies),
        connectErrors: Object.fromEntries(connectErrors),
        bytesSent,
      };
    },
  };
}

// The stream attacks of the soak benchmark (issue 23 "Live updates no client can abuse"), each from loopback
// addresses of its own (127.0.0.x, 127.0.1.x: every 127/8 address is loopback on Linux), and a probe from
// yet another one (127.0.0.250: a cheap query every 250 ms, its success rate and p99). Live events come
// from `writer`: every 5 s one statement inserting 10 transfers of the most held tick (one notification,
// 10 events), as the indexer would. Each attack tallies what the gateway answered.
import net from 'node:net';
import postgres from 'postgres';
import type { Attack, AttackContext } from './soak-attack.js';
import { request, Tally } from './soak-http.js';
import { Clock } from './soak-clock.js';

const probeAddress = '127.0.0.250';

/** One raw SSE request (HTTP/1.1, kept alive). */
function sseRequest(query: string, variables: Record<string, unknown> = {}): string {
  const body = JSON.stringify({ query, variables });
  return `POST /graphql HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: text/event-stream\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

interface RawStream {
  socket: net.Socket;
  /** The status of the first response, once its head is in. */
  status: () => number | null;
  /** Bytes received; whether an error code was seen. */
  received: () => number;
  saw: (text: string) => boolean;
  closed: Promise<void>;
}

/** Opens a connection from `localAddress` and writes `payload`; `read: false` stops reading after the head. */
function openRaw(ctx: AttackContext, localAddress: string, payload: string, read = true): RawStream {
  const socket = net.connect({ host: ctx.host, port: ctx.port, localAddress });
  let status: number | null = null;
  let bytes = 0;
  let head = '';
  let tail = '';
  const seen = new Set<string>();
  socket.on('error', () => {});
  socket.on('connect', () => socket.write(payload));
  socket.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    const text = chunk.toString('latin1');
    if (status === null) {
      head += text;
      const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (m) {
        status = Number(m[1]);
        if (!read) socket.pause();
      }
    }
    // error codes can straddle chunks: look in the last bytes too
    const window = tail + text;
    for (const code of ['SLOW_CONSUMER', 'TOO_MANY_SUBSCRIPTIONS', 'TOO_MANY_REQUESTS', 'BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED']) {
      if (window.includes(code)) seen.add(code);
    }
    tail = text.slice(-64);
  });
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, status: () => status, received: () => bytes, saw: (t) => seen.has(t), closed };
}

const outcomeOf = (s: RawStream) =>
  `${s.status() ?? 'no-reply'}${['SLOW_CONSUMER', 'TOO_MANY_SUBSCRIPTIONS', 'TOO_MANY_REQUESTS', 'BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED']
    .filter((c) => s.saw(c)).map((c) => ` ${c}`).join('')}`;

/** A selection of the tick's holder pages, 14 aliases × 1000 holders: ~1 MB per event on the demo's top tick. */
function bigTickSelection(ctx: AttackContext): string {
  const [chain, protocol, tick] = ctx.ticks[0]!;
  const pages = Array.from({ length: 14 }, (_, i) => `h${i}: holders(first: 1000) { edges { node { address balance } } }`).join(' ');
  return `subscription { tickActivity(chain: "${chain}", protocol: "${protocol}", tick: "${tick}") { movement { amount } tick { ${pages} } } }`;
}

function attack(name: string, what: string, body: (clock: Clock, tally: Tally, extra: Record<string, unknown>) => Promise<void>): Attack {
  const clock = new Clock();
  const tally = new Tally();
  const extra: Record<string, unknown> = {};
  return { name, what, run: () => body(clock, tally, extra), stop: () => clock.stop(), result: () => ({ ...tally.toJSON(), ...extra }) };
}

export function buildStreamAttacks(ctx: AttackContext & { dbUrl?: string; idleAddresses?: number }): Attack[] {
  const attacks: Attack[] = [];
  const blocks = 'subscription { blocks { height } }';

  // events: 10 transfers of the top tick in one statement every 5 s
  if (ctx.dbUrl) {
    const dbUrl = ctx.dbUrl;
    attacks.push(attack('stream-events', 'every 5 s one statement inserting 10 transfers of the most held tick (one notification, 10 events)',
      async (clock, tally) => {
        const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
        const [chain, protocol, tick] = ctx.ticks[0]!;
        try {
          while (!clock.stopped) {
            await clock.sleep(5_000);
            if (clock.stopped) break;
            const started = performance.now();
            await sql`INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
              SELECT (SELECT id FROM ticks WHERE chain = ${chain} AND protocol = ${protocol} AND tick = ${tick}),
                     '0xsoak' || g, 'soak-' || g || '-' || ${String(Math.random())}, 1, 3, 'transfer', now(), now()
                FROM generate_series(1, 10) g`.then(() => tally.add('inserted 10', 0, performance.now() - started),
              (e: Error) => tally.add(`error ${e.message.slice(0, 60)}`));
          }
        } finally {
          await sql.end({ timeout: 2 });
        }
      }));
  }

  // 1: 6 subscriptions pipelined on one connection, half of them with a 1 MB variable, closed after 300 ms
  attacks.push(attack('stream-pipelined',
    '6 subscription POSTs pipelined on one keep-alive connection (every other round with a 1 MB variable each), closed after 300 ms; 3 addresses (127.0.0.3–5) in turn, 5 connections a second',
    async (clock, tally) => {
      let i = 0;
      while (!clock.stopped) {
        const big = i % 2 === 1;
        const a = big ? 'x'.repeat(1024 * 1024) : '0xabc';
        const payload = Array.from({ length: 6 }, () => sseRequest('subscription($a: String!) { addressActivity(address: $a) { id } }', { a })).join('');
        const s = openRaw(ctx, `127.0.0.${3 + (i % 3)}`, payload);
        i++;
        await clock.sleep(300);
        s.socket.destroy();
        tally.add(`${big ? '1 MB' : 'small'}: ${outcomeOf(s)}`, s.received());
        await clock.sleep(100);
      }
    }));

  // 2: 32 streams from one address that never read, a ~1 MB selection (and the events above)
  attacks.push(attack('stream-slow-readers',
    '32 streams from 127.0.0.6 that never read after the response head, tickActivity of the top tick with 14 × holders(first: 1000) (~1 MB per event); each held 15 s (the gateway cuts it: igw_subscriptions_slow_consumers_total), then reopened',
    async (clock, tally) => {
      const query = bigTickSelection(ctx);
      const one = async () => {
        while (!clock.stopped) {
          const s = openRaw(ctx, '127.0.0.6', sseRequest(query), false);
          const started = performance.now();
          while (!clock.stopped && s.status() === null && performance.now() - started < 10_000) await clock.sleep(50);
          if (s.status() === 200) await Promise.race([s.closed, clock.sleep(15_000)]);
          tally.add(outcomeOf(s), s.received(), performance.now() - started);
          s.socket.destroy();
          await clock.sleep(1_000);
        }
      };
      await Promise.all(Array.from({ length: 32 }, one));
    }));

  // 3: oversized arguments and lists
  attacks.push(attack('stream-big-arguments',
    'subscriptions with a 1 MB argument literal, a 1 MB $address, and blocks(chains:) with 90,000 names, in turn from 127.0.0.7–9, 4 a second',
    async (clock, tally) => {
      const names = Array.from({ length: 90_000 }, (_, i) => `c${i}`);
      const bodies = [
        JSON.stringify({ query: `subscription { addressActivity(address: "${'y'.repeat(1_000_000)}") { id } }` }),
        JSON.stringify({ query: 'subscription($a: String!) { addressActivity(address: $a) { id } }', variables: { a: 'z'.repeat(1_000_000) } }),
        JSON.stringify({ query: 'subscription($c: [String!]) { blocks(chains: $c) { height } }', variables: { c: names } }),
      ];
      let i = 0;
      while (!clock.stopped) {
        const o = await request({
          url: `${ctx.base}/graphql`, body: bodies[i % 3]!, localAddress: `127.0.0.${7 + (i % 3)}`, timeoutMs: 10_000,
          headers: { accept: 'text/event-stream' },
        });
        const code = [...o.codes.keys()].join(' ');
        tally.add(`${['literal', 'variable', 'list'][i % 3]}: ${o.status ?? o.error} ${code}`, o.bytes, o.ms);
        i++;
        await clock.sleep(250);
      }
    }));

  // 4: idle streams from many addresses, each within the per-address cap
  const idleAddresses = ctx.idleAddresses ?? 157;
  attacks.push(attack('stream-idle',
    `${idleAddresses} addresses (127.0.1.x–127.0.2.x) × 32 idle blocks streams (${idleAddresses * 32} in all, each within every per-address cap), opened over the first 10 s; each reopened 1 s after it ends`,
    async (clock, tally, extra) => {
      let open = 0;
      let maxOpen = 0;
      const one = async (k: number) => {
        await clock.sleep((k / (idleAddresses * 32)) * 10_000);
        const address = `127.0.${1 + Math.floor(k / 32 / 250)}.${1 + (Math.floor(k / 32) % 250)}`;
        while (!clock.stopped) {
          const s = openRaw(ctx, address, sseRequest(blocks));
          let counted = false;
          const started = performance.now();
          const opened = setInterval(() => {
            if (!counted && s.status() === 200) {
              counted = true;
              open++;
              maxOpen = Math.max(maxOpen, open);
            }
          }, 100);
          await Promise.race([s.closed, clock.sleep(120_000)]);
          clearInterval(opened);
          if (counted) open--;
          tally.add(outcomeOf(s), s.received(), performance.now() - started);
          s.socket.destroy();
          await clock.sleep(1_000);
        }
      };
      extra.maxOpenStreams = 0;
      const timer = setInterval(() => (extra.maxOpenStreams = maxOpen), 500);
      await Promise.all(Array.from({ length: idleAddresses * 32 }, (_, k) => one(k)));
      clearInterval(timer);
      extra.maxOpenStreams = maxOpen;
    }));

  // 5: fan-out: 32 reading streams with the big selection
  attacks.push(attack('stream-fan-out',
    '32 reading streams from 127.0.0.10 with the ~1 MB selection (one group: executed and rendered once per event); each reopened 1 s after it ends',
    async (clock, tally) => {
      const query = bigTickSelection(ctx);
      const one = async () => {
        while (!clock.stopped) {
          const s = openRaw(ctx, '127.0.0.10', sseRequest(query));
          await Promise.race([s.closed, clock.sleep(120_000)]);
          tally.add(outcomeOf(s), s.received());
          s.socket.destroy();
          await clock.sleep(1_000);
        }
      };
      await Promise.all(Array.from({ length: 32 }, one));
    }));

  // the probe: a cheap query every 250 ms from an address no attack uses
  attacks.push(attack('stream-probe', `{ __typename } every 250 ms from ${probeAddress}: success rate and latency`,
    async (clock, tally, extra) => {
      const ms: number[] = [];
      let ok = 0;
      let sent = 0;
      // the gateway's stream figures, once a second
      extra.maxPendingBytes = 0;
      const scrape = setInterval(() => {
        void fetch(`${ctx.base}/metrics`).then((r) => r.text()).then((text) => {
          const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
          extra.maxPendingBytes = Math.max(extra.maxPendingBytes as number, value('igw_subscription_pending_bytes') || 0);
          extra.slowConsumers = value('igw_subscriptions_slow_consumers_total');
          extra.eventExecutions = value('igw_live_event_executions_total');
          extra.eventsDelivered = value('igw_live_events_delivered_total');
        }, () => {});
      }, 1_000);
      while (!clock.stopped) {
        const o = await request({ url: `${ctx.base}/graphql`, body: JSON.stringify({ query: '{ __typename }' }), localAddress: probeAddress, timeoutMs: 5_000 });
        sent++;
        if (o.status === 200) {
          ok++;
          ms.push(o.ms);
        }
        tally.add(`${o.status ?? o.error}`, o.bytes, o.ms);
        const sorted = [...ms].sort((a, b) => a - b);
        extra.sent = sent;
        extra.successPercent = Math.round((ok / sent) * 1000) / 10;
        extra.p50Ms = Math.round(sorted[Math.floor(sorted.length * 0.5)] ?? 0);
        extra.p99Ms = Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0);
        await clock.sleep(250);
      }
      clearInterval(scrape);
    }));
  return attacks;
}

// The protocol attacks of issue 23 for the soak benchmark (bench/soak.ts), each from its own loopback
// addresses (the normal load, 127.0.0.1, is the probe): JSON-RPC v1 names in random letter case with the
// /metrics scrape watched, an APQ flush attempt against another client's entry, and GraphiQL loaded by 20
// addresses like a browser without a cache. Each loops until stopped; its figures are in `figures`.
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { Attack, AttackContext } from './soak-attack.js';
import { outcomeKey, request, Tally } from './soak-http.js';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A stop signal whose sleeps end early. */
function stopper() {
  let stopped = false;
  const wakes = new Set<() => void>();
  return {
    get stopped() {
      return stopped;
    },
    sleep: (ms: number) => new Promise<void>((resolve) => {
      if (stopped) return resolve();
      const done = () => {
        clearTimeout(timer);
        wakes.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      wakes.add(done);
    }),
    stop() {
      stopped = true;
      for (const w of [...wakes]) w();
    },
  };
}

const randomCase = (name: string) => [...name].map((c) => (Math.random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');

/** Batches of 20 v1 calls in random letter case, back to back; /metrics scraped every 500 calls. */
function v1RandomCase(ctx: AttackContext): Attack {
  const from = '127.0.0.3';
  const clock = stopper();
  const agent = new http.Agent({ keepAlive: true, localAddress: from } as http.AgentOptions);
  const tally = new Tally();
  const spellings = new Set<string>();
  const scrapes: { afterCalls: number; bytes: number; ms: number }[] = [];
  let calls = 0;
  const [chain, protocol, tick] = ctx.ticks[0]!;
  return {
    name: 'v1-random-case',
    what: 'JSON-RPC v1 batches of 20 calls (inscription.Tick, block.LastNumber) in random letter case, back to back from 127.0.0.3; /metrics scraped every 500 calls',
    async run() {
      while (!clock.stopped) {
        const batch = Array.from({ length: 20 }, (_, k) => {
          const method = randomCase(k % 2 ? 'inscription.Tick' : 'block.LastNumber');
          spellings.add(method);
          return { jsonrpc: '2.0', id: k, method, params: k % 2 ? [chain, protocol, tick] : [[chain]] };
        });
        const o = await request({ url: `${ctx.base}/v1/rpc`, body: JSON.stringify(batch), agent, localAddress: from, timeoutMs: 30_000 });
        if (clock.stopped && o.status === null) break;
        tally.add(outcomeKey(o), o.bytes, o.ms);
        const before = calls;
        calls += batch.length;
        if (Math.floor(calls / 500) > Math.floor(before / 500)) {
          const m = await request({ url: `${ctx.base}/metrics`, method: 'GET', localAddress: from, timeoutMs: 30_000 });
          scrapes.push({ afterCalls: calls, bytes: m.bytes, ms: Math.round(m.ms) });
        }
        if (o.status === null) await clock.sleep(250);
      }
    },
    stop() {
      clock.stop();
      agent.destroy();
    },
    result: () => ({
      ...tally.toJSON(),
      figures: { calls, distinctSpellings: spellings.size, scrapes, lastScrapeBytes: scrapes.at(-1)?.bytes ?? null },
    }),
  };
}

/**
 * A victim (127.0.0.5) registers one document; the attacker (127.0.0.4) sends, over and over, three 1 MB
 * registrations and 50 small valid ones of its own; after each round the victim's hash is asked again.
 */
function apqFlush(ctx: AttackContext): Attack {
  const attacker = '127.0.0.4';
  const victim = '127.0.0.5';
  const clock = stopper();
  const agent = new http.Agent({ keepAlive: true, localAddress: attacker } as http.AgentOptions);
  const tally = new Tally();
  const victimDocument = `query SoakVictim${Date.now()} { chains { chain name } }`;
  const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
  let rounds = 0;
  let victimKept = 0;
  let victimLost = 0;
  const ask = async (from: string, body: object, a?: http.Agent) =>
    request({ url: `${ctx.base}/graphql`, body: JSON.stringify(body), agent: a, localAddress: from, timeoutMs: 30_000 });
  return {
    name: 'apq-flush',
    what: 'APQ: 127.0.0.5 registers one document; 127.0.0.4 then registers three 1 MB documents and 50 small valid ones per round; the victim\'s hash is asked after each round',
    async run() {
      await ask(victim, { query: victimDocument, extensions: apq(sha256(victimDocument)) });
      while (!clock.stopped) {
        for (let i = 0; i < 3 && !clock.stopped; i++) {
          const big = `# ${String(rounds * 3 + i).repeat(1_000_000 / String(rounds * 3 + i).length)}\n{ chains { chain } }`;
          const o = await ask(attacker, { query: big, extensions: apq(sha256(big)) }, agent);
          tally.add(`1MB ${outcomeKey(o)}`, o.bytes, o.ms);
        }
        for (let i = 0; i < 50 && !clock.stopped; i++) {
          const small = `query Flood${rounds}_${i} { chains { chain } }`;
          const o = await ask(attacker, { query: small, extensions: apq(sha256(small)) }, agent);
          tally.add(`small ${outcomeKey(o)}`, o.bytes, o.ms);
        }
        if (clock.stopped) break;
        const check = await ask(victim, { extensions: apq(sha256(victimDocument)) });
        if (check.head.includes('PersistedQueryNotFound')) victimLost++;
        else victimKept++;
        rounds++;
      }
    },
    stop() {
      clock.stop();
      agent.destroy();
    },
    result: () => ({ ...tally.toJSON(), figures: { rounds, victimKept, victimLost } }),
  };
}

/** 20 addresses (127.0.0.10–29) each loading GraphiQL as a browser without a cache: the page, then its assets. */
function graphiql20(ctx: AttackContext): Attack {
  const clock = stopper();
  const tally = new Tally();
  const addresses = Array.from({ length: 20 }, (_, i) => `127.0.0.${10 + i}`);
  let bytes = 0;
  let loads = 0;
  let refused = 0;
  const started = performance.now();
  let ended = 0;
  const browser = { accept: 'text/html,application/xhtml+xml', 'accept-encoding': 'gzip, deflate, br' };
  return {
    name: 'graphiql-20',
    what: 'GraphiQL loaded back to back by 20 addresses (127.0.0.10–29) as a browser without a cache (page, then every asset it names; Accept-Encoding gzip, deflate, br)',
    async run() {
      await Promise.all(addresses.map(async (from) => {
        const agent = new http.Agent({ keepAlive: true, localAddress: from } as http.AgentOptions);
        while (!clock.stopped) {
          const page = await request({ url: `${ctx.base}/graphql`, method: 'GET', headers: browser, agent, localAddress: from, timeoutMs: 30_000 });
          if (clock.stopped && page.status === null) break;
          tally.add(`page ${outcomeKey(page)}`, page.bytes, page.ms);
          bytes += page.bytes;
          if (page.status === 429) refused++;
          if (page.status !== 200) {
            await clock.sleep(page.status === 429 ? Number(page.headers['retry-after'] ?? 1) * 1000 : 250);
            continue;
          }
          // (the page is small now; before it was the whole 9 MB and named no asset)
          const assets = [...page.head.matchAll(/(?:src|href)="(\/graphql\/assets\/[^"]+)"/g)].map((m) => m[1]!);
          for (const path of assets) {
            const a = await request({ url: `${ctx.base}${path}`, method: 'GET', headers: { 'accept-encoding': browser['accept-encoding'] }, agent, localAddress: from, timeoutMs: 30_000 });
            tally.add(`asset ${outcomeKey(a)}`, a.bytes, a.ms);
            bytes += a.bytes;
            if (a.status === 429) refused++;
          }
          loads++;
        }
        agent.destroy();
      }));
    },
    stop() {
      if (!ended) ended = performance.now();
      clock.stop();
    },
    result: () => {
      const seconds = ((ended || performance.now()) - started) / 1000;
      return { ...tally.toJSON(), figures: { loads, refused, bytesServed: bytes, mbPerS: Math.round((bytes / 1024 / 1024 / seconds) * 10) / 10 } };
    },
  };
}

export function protocolAttacks(ctx: AttackContext): Attack[] {
  return [v1RandomCase(ctx), apqFlush(ctx), graphiql20(ctx)];
}

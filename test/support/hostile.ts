import fc from 'fast-check';
import { expect } from 'vitest';
import { Fixture } from './fixtures.js';

// Shared by the hostile-input tests: raw HTTP exchanges, the "nothing leaks" check, a tally of replies
// by code, a prober that keeps sending one ordinary request while the hostile ones run, a fixture whose
// tick names are metacharacters, and the hostile strings both generators draw from.

export interface Exchange {
  status: number;
  contentType: string | null;
  text: string;
  ms: number;
}

/** Sends exactly these bytes (no JSON encoding) and reads the whole reply; fails after `timeoutMs`. */
export async function send(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array },
  timeoutMs = 15_000,
): Promise<Exchange> {
  const started = performance.now();
  const response = await fetch(url, {
    method: init.method ?? 'POST',
    headers: init.headers,
    // a copy types as Uint8Array<ArrayBuffer>, which fetch's BodyInit wants
    body: typeof init.body === 'string' || init.body === undefined ? init.body : new Uint8Array(init.body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type'), text, ms: performance.now() - started };
}

// What must never reach a client: SQL (the server's own statements and PostgreSQL's messages), stack
// frames and file paths. The generators never put these words in their own input, so a hit is a leak.
const leakPatterns: [string, RegExp][] = [
  ['sql statement', /\b(select|insert|update|delete)\b[\s\S]{0,200}\bfrom\b\s+"?(ticks|balances|address_txs|transactions|chains|indexed_blocks|list_totals)\b/i],
  ['sql fragment', /\b(where|order by|limit)\s+[\s\S]{0,40}\$\d+/i],
  ['postgres message', /(syntax error at or near|relation "|column "|violates|SQLSTATE|invalid input syntax for type|postgres(ql)?\b)/i],
  ['driver error', /(ECONNREFUSED|ECONNRESET|CONNECTION_CLOSED|CONNECT_TIMEOUT)/],
  ['stack trace', /\bat [\w$.<>]+ \(|\n\s+at\s|Error: .*\n\s+at/],
  ['file path', /(\/work\/|\/home\/|\/usr\/|node_modules|file:\/\/|[\w-]+\.(ts|js|mjs|cjs):\d+)/],
];

function findLeak(text: string): string | null {
  for (const [name, pattern] of leakPatterns) {
    const match = pattern.exec(text);
    if (match) return `${name}: ${JSON.stringify(match[0].slice(0, 120))}`;
  }
  return null;
}

/** Counts replies by a key (status, code) for the closing figures. */
export class Tally {
  readonly counts = new Map<string, number>();
  add(key: string | number, n = 1) {
    this.counts.set(String(key), (this.counts.get(String(key)) ?? 0) + n);
  }
  get(key: string | number) {
    return this.counts.get(String(key)) ?? 0;
  }
  toString() {
    return [...this.counts.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k}: ${v}`).join(', ');
  }
}

/**
 * Sends `probe` every `everyMs` until stopped, recording each latency; every probe must succeed. It shows
 * that the hostile load never starved an ordinary request.
 */
export function startProber(probe: () => Promise<void>, everyMs = 100) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        await probe();
      } catch (error) {
        failures.push((error as Error).message);
      }
      latencies.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        count: latencies.length,
        failures,
        p50: sorted[Math.floor(sorted.length / 2)] ?? 0,
        max: sorted.at(-1) ?? 0,
      };
    },
  };
}

/** Runs `task` over `items`, at most `concurrency` at a time. */
export async function pool<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await task(items[next++]!);
  }));
}

export function expectNoLeak(text: string, context: string) {
  const leak = findLeak(text);
  expect(leak, `${context}: ${leak}\n${text.slice(0, 500)}`).toBeNull();
}

/** Ticks whose names are the metacharacters the generators send, so filters on them really match rows. */
export const hostileTicks = ['ordi', 'a%b', 'x_y', 'back\\slash', "o'k", 'ｏｒｄｉ', '🐶dog'];
const hostileAddresses = ['0xAAaa000000000000000000000000000000000001', 'bc1qhostile0000000000000000000000000000000'];

export function hostileFixture(): Fixture {
  const f = new Fixture();
  hostileTicks.forEach((tick, i) => {
    const t = f.tick({ chain: i % 2 ? 'btc' : 'eth', protocol: i % 2 ? 'brc-20' : 'erc-20', tick, total_supply: '21000000' });
    f.mint(t, hostileAddresses[i % 2]!, String(1000 + i));
    if (i % 3 === 0) f.transfer(t, hostileAddresses[i % 2]!, hostileAddresses[(i + 1) % 2]!, '10');
  });
  return f;
}

// --- hostile strings, shared by the generators of both surfaces -------------------------------------------
const sqlish = [
  "'", "''", '%', '_', '\\', '%_\\', "' OR '1'='1", "'; DROP TABLE ticks; --", '\\x00', '%%', '_%_', 'a%', "\\'", '$$',
  "E'\\\\'", '/*', '*/', '--', ';', '1) OR (1=1', '\\%', '\\_', '[a-z]%', '.*', '^$',
];
/** Case and normalisation traps, invisible and control characters, lone surrogates. */
const lookalikes = [
  'ＯＲＤＩ', 'ORDI', 'ordı', 'İordi', 'ǅ', 'ß', 'ẞ', 'ﬃ', 'e\u0301', '\u202Eordi', '\uFEFFordi', 'ordi\u200B', 'Ω', 'Ω',
  '\u0000', 'a\u0000b', '\ud800', '\udfff', '🐶', '🐶DOG', 'A%B', 'X_Y',
];
const numberish = ['NaN', 'Infinity', '-Infinity', '1e309', '-0', '0x10', '١٢٣', ' 10', '10 ', '1_000', '+1', '1.0', ''];
/** Values that match fixture rows, so that hostile requests also reach real data. */
const realValues = [...hostileTicks, ...hostileAddresses, 'eth', 'btc', 'erc-20', 'brc-20', 'ETH', 'BRC-20'];

// any code points, lone surrogates included (fc.string({unit: 'binary'}) takes 2 s to build)
const anyCodePoints = fc.array(fc.integer({ min: 0, max: 0x10ffff }), { maxLength: 16 }).map((cps) => String.fromCodePoint(...cps));
const controlString = fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 20 });

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: anyCodePoints },
  { weight: 3, arbitrary: fc.constantFrom(...sqlish) },
  { weight: 2, arbitrary: fc.constantFrom(...lookalikes) },
  { weight: 1, arbitrary: controlString },
  { weight: 1, arbitrary: fc.constantFrom(...numberish) },
  { weight: 4, arbitrary: fc.constantFrom(...realValues) },
  { weight: 1, arbitrary: fc.string({ minLength: 1_000, maxLength: 1_100 }) },
);

import { performance } from 'node:perf_hooks';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Sql } from '../../src/db/client.js';
import { portAnswers } from './ports.js';

// Helpers of the observability and cache tests: a logger whose lines the test can read, an indexer-like
// writer, Redis discovery.

/** A pino logger writing JSON lines into an array. */
export function capturingLogger(level: 'debug' | 'info' = 'info') {
  const lines: Record<string, any>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, any>);
      }
      callback();
    },
  });
  const logger = pino({ level, formatters: { level: (label: string) => ({ level: label }) } }, destination);
  return { logger, lines, raw };
}

/** Polls `probe` until it returns true; returns the ms it took, or throws after `timeoutMs`. */
export async function waitFor(probe: () => Promise<boolean>, timeoutMs = 3_000, everyMs = 10): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function dataVersion(sql: Sql): Promise<string> {
  const [row] = await sql<{ version: string }[]>`SELECT version::text AS version FROM data_version`;
  return row!.version;
}

/**
 * What the indexer does for one mint in a new block, row by row with the triggers on (no bulk path): a
 * raw transaction, the movement, the balance, and the chain's indexed height — one transaction.
 */
export async function indexMint(
  sql: Sql, t: { chain: string; protocol: string; tick: string }, address: string, amount: string,
): Promise<void> {
  await sql.begin(async (tx) => {
    const [tick] = await tx<{ id: string }[]>`SELECT id FROM ticks WHERE chain = ${t.chain} AND protocol = ${t.protocol} AND tick = ${t.tick}`;
    const [block] = await tx<{ next: string }[]>`
      UPDATE indexed_blocks SET block_number = block_number + 1, block_time = block_time + interval '2 seconds',
             indexed_at = now()
       WHERE chain = ${t.chain} RETURNING block_number::text AS next`;
    const height = block?.next ?? '1';
    const hash = `0x${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`.padEnd(66, '0').slice(0, 66);
    await tx`INSERT INTO transactions (chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                                       to_address, op, tick, amt, gas, gas_price, status, created_at, updated_at)
             VALUES (${t.chain}, ${t.protocol}, ${height}, 0, now(), ${hash}, ${address}, ${address}, 'mint', ${t.tick},
                     ${amount}, 21000, 1, 1, now(), now())`;
    await tx`INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
             VALUES (${tick!.id}, ${address}, ${hash}, ${amount}, 2, 'mint', now(), now())`;
    await tx`INSERT INTO balances (tick_id, address, balance, available) VALUES (${tick!.id}, ${address}, ${amount}, ${amount})
             ON CONFLICT (tick_id, address_key) DO UPDATE
               SET balance = balances.balance + EXCLUDED.balance, available = balances.available + EXCLUDED.available`;
  });
}

/** REDIS_URL, else 127.0.0.1:6379 when it answers, else null (the Redis tests are then skipped). */
export async function findRedis(): Promise<string | null> {
  if (process.env.REDIS_URL) return process.env.REDIS_URL;
  return (await portAnswers('127.0.0.1', 6379)) ? 'redis://127.0.0.1:6379' : null;
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/**
 * A GraphQL reply without the one member that moves with the clock (freshness.dataAgeSeconds, whole
 * seconds since the newest block): two replies of the same data compare equal across a second boundary.
 */
export function sameData<T>(json: T): T {
  const freshness = (json as { extensions?: { freshness?: Record<string, unknown> } }).extensions?.freshness;
  if (!freshness || !('dataAgeSeconds' in freshness)) return json;
  const extensions = (json as { extensions: Record<string, unknown> }).extensions;
  return { ...json, extensions: { ...extensions, freshness: { ...freshness, dataAgeSeconds: 'any' } } };
}

/** sameData for a reply's text: every other byte (the stored data text included) still has to match. */
export const sameText = (text: string): string => text.replace(/"dataAgeSeconds":\d+/, '"dataAgeSeconds":"any"');

import type { Sql } from '../../src/db/client.js';
import { normalizeDecimal } from '../../src/sync/mapping.js';
import type { WriterConn } from './indexer.js';

// The source's answer to "balances at height H", computed here from its balance_txn rows (each with its
// transaction's txs.block_height; within one block the highest id wins), against the read model's
// balance_history at every height where something changed (and one below the first): every positive
// balance of every (chain, protocol, tick, address). Returns the differences as readable lines.

type Conn = Pick<WriterConn, 'query'>;

export async function historyDifferences(source: Conn, sql: Sql): Promise<{ heights: number; differences: string[] }> {
  const result = await source.query(`SELECT b.id, b.chain, b.protocol, b.tick, b.address, b.balance,
      (SELECT min(x.block_height) FROM txs x WHERE x.tx_hash = b.tx_hash AND x.chain = b.chain) AS h FROM balance_txn b ORDER BY b.id`);
  const rows = (Array.isArray((result as unknown[])[0]) ? (result as unknown[][])[0] : result) as
    { id: unknown; chain: string; protocol: string; tick: string; address: string; balance: unknown; h: unknown }[];
  const changes = rows.map((r) => ({
    id: Number(r.id), h: Number(r.h), key: [r.chain, r.protocol, r.tick].map((s) => s.toLowerCase()).join('/'),
    address: r.address.toLowerCase(), balance: normalizeDecimal(String(r.balance)),
  }));
  const heights = [...new Set(changes.map((c) => c.h))].sort((a, b) => a - b);
  if (heights.length) heights.unshift(heights[0]! - 1);
  const differences: string[] = [];
  for (const h of heights) {
    const expected = new Map<string, string>();
    for (const c of [...changes].filter((c) => c.h <= h).sort((a, b) => a.h - b.h || a.id - b.id)) {
      expected.set(`${c.key} ${c.address}`, c.balance);
    }
    for (const [k, v] of expected) if (v === '0') expected.delete(k);
    const mine = await sql<{ k: string; balance: string }[]>`
      SELECT t.chain || '/' || t.protocol || '/' || t.tick || ' ' || b.address_key AS k, b.balance::text AS balance
        FROM balance_history b JOIN ticks t ON t.id = b.tick_id
       WHERE b.balance > 0 AND b.block_height <= ${h} AND (b.valid_to IS NULL OR b.valid_to > ${h})`;
    const actual = new Map(mine.map((m) => [m.k, normalizeDecimal(m.balance)]));
    for (const k of new Set([...expected.keys(), ...actual.keys()])) {
      if (expected.get(k) !== actual.get(k)) differences.push(`at ${h}: ${k} source ${expected.get(k)} read model ${actual.get(k)}`);
    }
  }
  return { heights: heights.length, differences };
}

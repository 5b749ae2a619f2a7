// Source reads of a chain's re-sync after a rewind (src/sync/rewind.ts), run inside the caller's snapshot.
import type { SourceRow } from '../mapping.js';
import type { SourceConnection } from './connection.js';
import { selectRows } from './schema.js';

/** The highest id of a source table, or of one chain's rows in it. */
export async function sourceMaxId(conn: SourceConnection, table: string, chain?: string): Promise<bigint> {
  const [rows] = chain
    ? await conn.query(`SELECT coalesce(max(id), 0) AS m FROM \`${table}\` WHERE chain = ?`, [chain])
    : await conn.query(`SELECT coalesce(max(id), 0) AS m FROM \`${table}\``);
  return BigInt(String((rows as { m: string }[])[0]!.m));
}

/** A chain's ids in (lo, hi] of a source table. */
export async function sourceChainIds(conn: SourceConnection, table: string, chain: string, lo: bigint, hi: bigint): Promise<Set<string>> {
  const [rows] = await conn.query(`SELECT id FROM \`${table}\` WHERE chain = ? AND id > ? AND id <= ?`, [chain, String(lo), String(hi)]);
  return new Set((rows as { id: unknown }[]).map((r) => String(r.id)));
}

/** Rows of a source table by id, in id order. */
export async function sourceRowsById(conn: SourceConnection, table: string, ids: string[]): Promise<SourceRow[]> {
  const [rows] = await conn.query(`${selectRows(table)} WHERE id IN (?) ORDER BY id`, [ids]);
  return rows as SourceRow[];
}

/** A page of a chain's balances after id `after`. */
export async function sourceChainBalances(conn: SourceConnection, chain: string, after: string, limit: number): Promise<SourceRow[]> {
  const [rows] = await conn.query('SELECT * FROM balances WHERE chain = ? AND id > ? ORDER BY id LIMIT ?', [chain, after, limit]);
  return rows as SourceRow[];
}

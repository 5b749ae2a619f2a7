// The sync's reads of the source's tables (backfill, follow, re-sync, verify), each one statement; the
// caller holds the snapshot (beginSnapshot) when several must agree.
import type { SourceRow } from '../mapping.js';
import type { SourceConnection } from './connection.js';
import { selectRows } from './schema.js';

/** Starts a consistent read-only snapshot (REPEATABLE READ first when asked: a session may have changed it). */
export async function beginSnapshot(conn: SourceConnection, o: { repeatableRead?: boolean } = {}): Promise<void> {
  if (o.repeatableRead) await conn.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
  await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
}

/** Ends the snapshot. */
export async function endSnapshot(conn: SourceConnection): Promise<void> {
  await conn.query('COMMIT');
}

const all = async (conn: SourceConnection, sql: string, params?: unknown[]) => (await conn.query(sql, params))[0] as SourceRow[];

/** The highest id of a source table, or of one chain's rows in it. */
export async function sourceMaxId(conn: SourceConnection, table: string, chain?: string): Promise<bigint> {
  const rows = chain
    ? await all(conn, `SELECT coalesce(max(id), 0) AS m FROM \`${table}\` WHERE chain = ?`, [chain])
    : await all(conn, `SELECT coalesce(max(id), 0) AS m FROM \`${table}\``);
  return BigInt(String(rows[0]!.m));
}

/** The ids in (lo, hi] of a source table, or of one chain's rows in it. */
export async function sourceIds(conn: SourceConnection, table: string, lo: bigint, hi: bigint, chain?: string): Promise<Set<string>> {
  const rows = chain
    ? await all(conn, `SELECT id FROM \`${table}\` WHERE chain = ? AND id > ? AND id <= ?`, [chain, String(lo), String(hi)])
    : await all(conn, `SELECT id FROM \`${table}\` WHERE id > ? AND id <= ?`, [String(lo), String(hi)]);
  return new Set(rows.map((r) => String(r.id)));
}

/** Rows of a source table by id, in id order. */
export function sourceRowsById(conn: SourceConnection, table: string, ids: string[]): Promise<SourceRow[]> {
  return all(conn, `${selectRows(table)} WHERE id IN (?) ORDER BY id`, [ids]);
}

/** The first `limit` rows with ids in (from, top], streamed to `onRow` in id order (`withHeights`: see selectRows). */
export function eachSourceRow(conn: SourceConnection, table: string, withHeights: boolean, range: { from: bigint; top: bigint; limit: number },
  onRow: (row: SourceRow) => void): Promise<void> {
  return conn.each(`${selectRows(table, withHeights)} WHERE id > ? AND id <= ? ORDER BY id LIMIT ?`,
    [String(range.from), String(range.top), range.limit], onRow);
}

/** The first `limit` rows of a source table above id `high`, in id order. */
export function sourceRowsAbove(conn: SourceConnection, table: string, high: string, limit: number): Promise<SourceRow[]> {
  return all(conn, `${selectRows(table)} WHERE id > ? ORDER BY id LIMIT ?`, [high, limit]);
}

/** A source table's rows with ids in (lo, hi], in id order (`withHeights`: see selectRows). */
export function sourceRowsIn(conn: SourceConnection, table: string, lo: bigint, hi: bigint, withHeights = true): Promise<SourceRow[]> {
  return all(conn, `${selectRows(table, withHeights)} WHERE id > ? AND id <= ? ORDER BY id`, [String(lo), String(hi)]);
}

/** chain_info and block, whole (they hold one row per chain). */
export async function sourceChainsAndBlocks(conn: SourceConnection): Promise<{ chains: SourceRow[]; blocks: SourceRow[] }> {
  return { chains: await all(conn, 'SELECT * FROM chain_info ORDER BY id'), blocks: await all(conn, 'SELECT * FROM block ORDER BY chain') };
}

/** The balances of these addresses for one tick, by the source's unique key (address, chain, protocol, tick). */
export function sourceBalancesOf(conn: SourceConnection, k: { chain: string; protocol: string; tick: string }, addresses: string[]): Promise<SourceRow[]> {
  return all(conn, 'SELECT * FROM balances WHERE address IN (?) AND chain = ? AND protocol = ? AND tick = ?', [addresses, k.chain, k.protocol, k.tick]);
}

/** A page of a chain's balances after id `after`. */
export function sourceChainBalances(conn: SourceConnection, chain: string, after: string, limit: number): Promise<SourceRow[]> {
  return all(conn, 'SELECT * FROM balances WHERE chain = ? AND id > ? ORDER BY id LIMIT ?', [chain, after, limit]);
}

/** The rows with ids in (lo, hi] stamped inside either window (updated_at on two clocks), at most `limit`. */
export function sourceRowsUpdated(conn: SourceConnection, table: string, lo: bigint, hi: bigint,
  windows: [from: string, to: string][], limit: number): Promise<SourceRow[]> {
  const within = windows.map(() => '(updated_at >= ? AND updated_at <= ?)').join(' OR ');
  return all(conn, `SELECT * FROM \`${table}\` WHERE id > ? AND id <= ? AND (${within}) ORDER BY id LIMIT ?`,
    [String(lo), String(hi), ...windows.flat(), limit]);
}

/** A page of the indexer's own counters (inscriptions_stats) after id `after`. */
export function sourceStatsPage(conn: SourceConnection, after: string, limit: number): Promise<SourceRow[]> {
  return all(conn, 'SELECT id, chain, protocol, tick, minted, holders, tx_cnt FROM inscriptions_stats WHERE id > ? ORDER BY id LIMIT ?', [after, limit]);
}

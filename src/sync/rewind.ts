// A manual rewind in the source: an operator deletes a chain's rows above a height and lowers its `block`
// row (the indexer then re-indexes from there). Seen as the height going down (both follow modes), as
// DELETEs in the binlog, or as ids that vanish (the polling sweep). The affected chain is then re-synced:
// range by range, the chain's ids of every insert-only table are compared with the source's, rows the
// source no longer has are deleted (children before their tick) and rows the read model lacks are copied;
// the chain's balances are re-read whole (changed ones written, vanished ones deleted); the polling id
// watermarks are lowered to the source's highest ids. No stale row above the height is left behind.
import type { Sql } from '../db/client.js';
import { changedBalances, type Tx } from '../db/sync-apply.js';
import { beginKeptBalances, chainIds, deleteUnkeptBalances, keepBalances, maxChainId } from '../db/sync-rewind.js';
import { deleteHistory, deleteMovements, deleteTicks, deleteTransactions, deleteUtxos } from '../db/sync-apply.js';
import * as state from '../db/sync-state.js';
import { applyChanges, type ApplyOptions, type Change } from './apply.js';
import { mapBalance, type SourceRow } from './mapping.js';
import type { SourceConnection } from './source/connection.js';
import { selectRows } from './source/schema.js';
import type { Logger } from './log.js';

/** Ticks first when copying (children need them), children first when deleting. */
const tables: { source: string; remove: (tx: Tx, ids: string[]) => Promise<void> }[] = [
  { source: 'inscriptions', remove: deleteTicks },
  { source: 'address_txs', remove: deleteMovements },
  { source: 'txs', remove: deleteTransactions },
  { source: 'utxos', remove: deleteUtxos },
  { source: 'balance_txn', remove: deleteHistory },
];
const span = 50_000n;
const page = 5_000;

export interface RewindResult { chain: string; deleted: Record<string, number>; copied: Record<string, number>; balancesDeleted: number }

async function sourceMax(conn: SourceConnection, table: string, chain?: string): Promise<bigint> {
  const [rows] = chain
    ? await conn.query(`SELECT coalesce(max(id), 0) AS m FROM \`${table}\` WHERE chain = ?`, [chain])
    : await conn.query(`SELECT coalesce(max(id), 0) AS m FROM \`${table}\``);
  return BigInt(String((rows as { m: string }[])[0]!.m));
}

/** The chains a source transaction rewinds: a lowered or deleted `block` row, or any delete of a synced row
 *  (the indexer never deletes). */
export function rewoundChains(changes: Change[]): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const c of changes) {
    const chain = String(c.row.chain ?? '').toLowerCase();
    if (!chain) continue;
    if (c.table === 'block') {
      if (c.kind === 'delete') out.set(chain, null);
      else if (c.kind === 'update' && c.before && BigInt(String(c.before.block_number)) > BigInt(String(c.row.block_number))) {
        out.set(chain, String(c.row.block_number));
      }
    } else if (c.kind === 'delete' && !out.has(chain)) out.set(chain, null);
  }
  return out;
}

/**
 * Re-syncs one chain with the source (see above). `height` is the lowered height (for the log). The source is
 * read in one consistent snapshot and every change is committed in one read-model transaction (issue 25,
 * D3): a reader sees the chain as it was or as the snapshot has it, never a state the source never had
 * (copied pages without the rows deleted, one table's new rows without another's).
 */
export async function resyncChain(sql: Sql, conn: SourceConnection, chain: string, height: string | null, apply: ApplyOptions,
  log: Logger): Promise<RewindResult> {
  log.warn({ chain, height }, 'rewind in the source: re-syncing the chain');
  await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
  try {
    const result = await sql.begin((tx) => resyncIn(tx as Tx, conn, chain, apply));
    log.warn({ ...result, height }, 'rewind re-sync done');
    return result;
  } finally {
    await conn.query('COMMIT').catch(() => {});
  }
}

async function resyncIn(tx: Tx, conn: SourceConnection, chain: string, apply: ApplyOptions): Promise<RewindResult> {
  const result: RewindResult = { chain, deleted: {}, copied: {}, balancesDeleted: 0 };
  const deletes: { source: string; remove: (tx: Tx, ids: string[]) => Promise<void>; ids: string[] }[] = [];
  // copies first (ticks before children), deletes after (children before ticks)
  for (const t of tables) {
    const top = [await sourceMax(conn, t.source, chain), await maxChainId(tx, t.source, chain)].reduce((a, b) => (a > b ? a : b));
    let copied = 0;
    const gone: string[] = [];
    for (let lo = 0n; lo < top; lo += span) {
      const hi = lo + span;
      const [rows] = await conn.query(`SELECT id FROM \`${t.source}\` WHERE chain = ? AND id > ? AND id <= ?`, [chain, String(lo), String(hi)]);
      const theirs = new Set((rows as { id: unknown }[]).map((r) => String(r.id)));
      const mine = new Set(await chainIds(tx, t.source, chain, lo, hi));
      gone.push(...[...mine].filter((id) => !theirs.has(id)));
      const missing = [...theirs].filter((id) => !mine.has(id));
      for (let i = 0; i < missing.length; i += page) {
        const [found] = await conn.query(`${selectRows(t.source)} WHERE id IN (?) ORDER BY id`, [missing.slice(i, i + page)]);
        const changes: Change[] = (found as SourceRow[]).map((row) => ({ table: t.source, kind: 'insert', row }));
        await applyChanges(tx, changes, apply);
        copied += changes.length;
      }
    }
    deletes.push({ ...t, ids: gone });
    result.copied[t.source] = copied;
  }
  // balances: the source's whole set for the chain; changed ones written, the others kept; the rest deleted
  {
    await beginKeptBalances(tx as Tx);
    let last = '0';
    for (;;) {
      const [rows] = await conn.query('SELECT * FROM balances WHERE chain = ? AND id > ? ORDER BY id LIMIT ?', [chain, last, page]);
      const batch = rows as SourceRow[];
      if (!batch.length) break;
      last = String(batch[batch.length - 1]!.id);
      const mapped = batch.flatMap((row) => { try { return [{ ...mapBalance(row, apply.ctx), row }]; } catch { return []; } });
      await keepBalances(tx as Tx, mapped.map((m) => ({ chain: m.chain, protocol: m.protocol, tick: m.tick, address: m.address })));
      const changed = new Set((await changedBalances(tx as Tx, mapped)).map((m) => m.row));
      const mappable = new Set(mapped.map((m) => m.row));
      // unmappable rows go on to be reported by the apply
      await applyChanges(tx as Tx, batch.filter((row) => changed.has(row) || !mappable.has(row))
        .map((row) => ({ table: 'balances', kind: 'update' as const, row })), apply);
      if (batch.length < page) break;
    }
    for (const d of [...deletes].reverse()) {
      for (let i = 0; i < d.ids.length; i += page) await d.remove(tx as Tx, d.ids.slice(i, i + page));
      result.deleted[d.source] = d.ids.length;
      if (d.source === 'address_txs') result.balancesDeleted = await deleteUnkeptBalances(tx as Tx, chain);
    }
    // polling: rows the indexer writes again get new ids; the watermarks may not stay above vanished ones
    const polls = await state.readPollState(tx as Tx);
    for (const t of ['inscriptions', 'address_txs', 'txs', 'balance_txn']) {
      const s = polls.get(t);
      if (!s) continue;
      const max = await sourceMax(conn, t);
      if (BigInt(s.high_id.split('.')[0]!) > max) {
        const gaps = Object.fromEntries(Object.entries(s.gaps).filter(([id]) => BigInt(id) <= max));
        await state.savePollState(tx, { ...s, high_id: String(max), gaps });
      }
    }
  }
  return result;
}

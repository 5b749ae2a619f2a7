// A manual rewind in the source: an operator deletes a chain's rows above a height and lowers its `block`
// row (the indexer then re-indexes from there). Seen as the height going down (both follow modes), as
// DELETEs in the binlog, or as ids that vanish (the polling sweep). The affected chain is then re-synced
// from one source snapshot inside the follow's read-model transaction: per insert-only table, the chain's
// ids are compared with the source's, rows the read model lacks are copied and rows the source no longer
// has are deleted (children before their tick); the chain's balances are re-read whole; the polling id
// watermarks are lowered to the source's highest ids.
import { chainIds, beginKeptBalances, deleteUnkeptBalances, keepBalances, maxChainId } from './target/rewind.js';
import { changedBalances } from './target/compare.js';
import { deleteHistory, deleteMovements, deleteTicks, deleteTransactions, deleteUtxos, type Tx } from '../db/writes.js';
import * as state from './target/state.js';
import { applyChanges, type ApplyOptions, type Change } from './apply.js';
import { mapBalance } from './mapping.js';
import { sourceChainBalances, sourceIds, sourceMaxId, sourceRowsById } from './source/reads.js';
import type { SourceConnection } from './source/connection.js';
import type { Logger } from '../observability/logger.js';

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

/** Adds the rewinds of `found` to `into`; a known height wins over an unknown one. */
export function noteRewinds(into: Map<string, string | null>, found: Map<string, string | null>): void {
  for (const [chain, height] of found) if (!into.has(chain) || height !== null) into.set(chain, height);
}

/**
 * Re-syncs one chain inside the caller's read-model transaction `tx`, from the snapshot `conn` holds open:
 * the chain then shows that snapshot's state, and a reader sees it only with the rest of `tx`. `height` is
 * the lowered height (for the log).
 */
export async function resyncInSnapshot(tx: Tx, conn: SourceConnection, chain: string, height: string | null, apply: ApplyOptions,
  log: Logger): Promise<RewindResult> {
  log.warn({ chain, height }, 'rewind in the source: re-syncing the chain');
  const result: RewindResult = { chain, deleted: {}, copied: {}, balancesDeleted: 0 };
  const gone = new Map<string, string[]>();
  for (const t of tables) {
    const found = await copyMissing(tx, conn, t.source, chain, apply);
    result.copied[t.source] = found.copied;
    gone.set(t.source, found.gone);
  }
  await beginKeptBalances(tx);
  await rereadBalances(tx, conn, chain, apply);
  for (const t of [...tables].reverse()) {
    const ids = gone.get(t.source)!;
    for (let i = 0; i < ids.length; i += page) await t.remove(tx, ids.slice(i, i + page));
    result.deleted[t.source] = ids.length;
    if (t.source === 'address_txs') result.balancesDeleted = await deleteUnkeptBalances(tx, chain);
  }
  await lowerWatermarks(tx, conn);
  log.warn({ ...result, height }, 'rewind re-sync done');
  return result;
}

/** Copies a table's rows of the chain the read model lacks; returns how many, and the ids the source no longer has. */
async function copyMissing(tx: Tx, conn: SourceConnection, table: string, chain: string, apply: ApplyOptions) {
  const top = [await sourceMaxId(conn, table, chain), await maxChainId(tx, table, chain)].reduce((a, b) => (a > b ? a : b));
  let copied = 0;
  const gone: string[] = [];
  for (let lo = 0n; lo < top; lo += span) {
    const theirs = await sourceIds(conn, table, lo, lo + span, chain);
    const mine = new Set(await chainIds(tx, table, chain, lo, lo + span));
    gone.push(...[...mine].filter((id) => !theirs.has(id)));
    const missing = [...theirs].filter((id) => !mine.has(id));
    for (let i = 0; i < missing.length; i += page) {
      const changes: Change[] = (await sourceRowsById(conn, table, missing.slice(i, i + page))).map((row) => ({ table, kind: 'insert', row }));
      await applyChanges(tx, changes, apply);
      copied += changes.length;
    }
  }
  return { copied, gone };
}

/** The source's whole set of the chain's balances: changed ones written, all of them kept (the rest is deleted later). */
async function rereadBalances(tx: Tx, conn: SourceConnection, chain: string, apply: ApplyOptions): Promise<void> {
  let last = '0';
  for (;;) {
    const batch = await sourceChainBalances(conn, chain, last, page);
    if (!batch.length) return;
    last = String(batch[batch.length - 1]!.id);
    const mapped = batch.flatMap((row) => { try { return [{ ...mapBalance(row, apply.ctx), row }]; } catch { return []; } });
    await keepBalances(tx, mapped.map((m) => ({ chain: m.chain, protocol: m.protocol, tick: m.tick, address: m.address })));
    const changed = new Set((await changedBalances(tx, mapped)).map((m) => m.row));
    const mappable = new Set(mapped.map((m) => m.row));
    // unmappable rows go on to be reported by the apply
    await applyChanges(tx, batch.filter((row) => changed.has(row) || !mappable.has(row))
      .map((row) => ({ table: 'balances', kind: 'update' as const, row })), apply);
    if (batch.length < page) return;
  }
}

/** Polling: rows the indexer writes again get new ids; the watermarks may not stay above vanished ones. */
async function lowerWatermarks(tx: Tx, conn: SourceConnection): Promise<void> {
  const polls = await state.readPollState(tx);
  for (const t of ['inscriptions', 'address_txs', 'txs', 'balance_txn']) {
    const s = polls.get(t);
    if (!s) continue;
    const max = await sourceMaxId(conn, t);
    if (BigInt(s.high_id.split('.')[0]!) > max) {
      const gaps = Object.fromEntries(Object.entries(s.gaps).filter(([id]) => BigInt(id) <= max));
      await state.savePollState(tx, { ...s, high_id: String(max), gaps });
    }
  }
}

// Applies source changes (from the binlog or from polling) to the read model inside the caller's
// transaction. Consecutive changes of one table and kind are written as one batch; order is kept, so a
// source transaction's tick insert lands before its balances.
import * as write from '../db/writes.js';
import { readShadowedTicks, recordShadowedTicks } from './target/state.js';
import { caseDuplicate, ShadowedTicks, TickKeys } from './case-ticks.js';
import {
  BadRowError, mapBalance, mapBalanceTxn, mapBlock, mapChain, mapMovement, mapTick, mapTransaction, mapUtxo, tickKeyString,
  tickKeyOf, type MapContext, type SourceRow, type TickKey,
} from './mapping.js';

export type ChangeKind = 'insert' | 'update' | 'delete';
export interface Change {
  table: string;
  kind: ChangeKind;
  /** the row after the change (insert, update) or the deleted row */
  row: SourceRow;
  /** the row before an update */
  before?: SourceRow;
}

/** Source tables the read model has no place for (no v2 answer reads them); their changes are skipped. */
export const ignoredTables = new Set(['inscriptions_stats', 'chain_stats_hour']);
export const syncedTables = ['chain_info', 'block', 'inscriptions', 'balances', 'address_txs', 'txs', 'utxos', 'balance_txn'] as const;

export interface ApplyOptions {
  ctx: MapContext;
  /** skip (and report) rows that cannot be mapped instead of stopping */
  skipBadRows: boolean;
  onBadRow: (error: BadRowError) => void;
  onApplied: (table: string, rows: number) => void;
  onDuplicateDeployHash: (d: { chain: string; deploy_hash: string; tick_id: string; first_id: string }) => void;
}

function mapOrReport<T>(rows: SourceRow[], map: (r: SourceRow) => T, options: ApplyOptions): T[] {
  const out: T[] = [];
  for (const r of rows) {
    try {
      out.push(map(r));
    } catch (error) {
      if (!(error instanceof BadRowError) || !options.skipBadRows) throw error;
      options.onBadRow(error);
    }
  }
  return out;
}

/** Child rows whose tick exists, with its id (the write then looks up nothing); the others are bad rows
 *  (stop, or report and skip). */
async function knownTicks<T extends TickKey & { id?: string; address?: string }>(tx: write.Tx, table: string, rows: T[],
  options: ApplyOptions): Promise<T[]> {
  const ids = await write.tickIds(tx, rows);
  const out: T[] = [];
  for (const r of rows) {
    const tickId = ids.get(tickKeyString(r));
    if (tickId !== undefined) { out.push({ ...r, tick_id: tickId }); continue; }
    const error = new BadRowError(table, r.id ?? r.address ?? '?', `no inscription ${r.chain}/${r.protocol}/${r.tick}`);
    if (!options.skipBadRows) throw error;
    options.onBadRow(error);
  }
  return out;
}

/** Inscriptions whose tick an earlier one has in another case are bad rows (src/sync/case-ticks.ts); with
 *  --skip-bad-rows they are recorded, so that their rows are skipped too. */
async function distinctTicks(tx: write.Tx, rows: SourceRow[], o: ApplyOptions, shadows: Shadows): Promise<SourceRow[]> {
  const known = await write.tickIds(tx, rows.map(tickKeyOf));
  const keys = new TickKeys(known);
  const out: SourceRow[] = [];
  for (const row of rows) {
    const first = keys.claim(row);
    if (first === null) { out.push(row); continue; }
    const { error, shadow } = caseDuplicate(row, first);
    if (!o.skipBadRows) throw error;
    o.onBadRow(error);
    await recordShadowedTicks(tx, [shadow]);
    shadows.known = null; // read again by the next child batch
  }
  return out;
}

/** The shadowed inscriptions, read once per applyChanges call (and again after one is recorded). */
interface Shadows { known: ShadowedTicks | null }

/** Rows of an inscription skipped as a case-only duplicate: bad rows (the table is empty but for hand edits). */
async function notShadowed(tx: write.Tx, table: string, rows: SourceRow[], o: ApplyOptions, shadows: Shadows): Promise<SourceRow[]> {
  shadows.known ??= new ShadowedTicks(await readShadowedTicks(tx));
  const shadowed = shadows.known;
  if (shadowed.size === 0) return rows;
  return mapOrReport(rows, (r) => { shadowed.check(table, r); return r; }, o);
}

/** Writes one batch of a table's rows of one kind (the changes too, for a re-keyed balance's old key). */
type BatchWriter = (tx: write.Tx, kind: ChangeKind, rows: SourceRow[], changes: Change[], o: ApplyOptions) => Promise<void>;

const ids = (rows: SourceRow[]) => rows.map((r) => String(r.id));

async function writeBalances(tx: write.Tx, kind: ChangeKind, rows: SourceRow[], changes: Change[], o: ApplyOptions): Promise<void> {
  if (kind === 'update') {
    // a re-keyed balance (address, chain, protocol or tick changed): the old key goes
    const moved = changes.filter((c) => c.before && ['address', 'chain', 'protocol', 'tick']
      .some((k) => String(c.before![k]).toLowerCase() !== String(c.row[k]).toLowerCase()));
    if (moved.length) await write.deleteBalances(tx, mapOrReport(moved.map((c) => c.before!), (r) => mapBalance(r, o.ctx), o));
  }
  const mapped = mapOrReport(rows, (r) => mapBalance(r, o.ctx), o);
  if (kind !== 'delete') await write.upsertBalances(tx, await knownTicks(tx, 'balances', mapped, o));
  else await write.deleteBalances(tx, mapped);
}

async function writeHistory(tx: write.Tx, kind: ChangeKind, rows: SourceRow[], _changes: Change[], o: ApplyOptions): Promise<void> {
  if (kind === 'delete') { await write.deleteHistory(tx, ids(rows)); return; }
  const known = await knownTicks(tx, 'balance_txn', mapOrReport(rows, (r) => mapBalanceTxn(r, o.ctx), o), o);
  const { rows: placed, missing } = await write.withBlockHeights(tx, known);
  withoutBlockHeight(missing, o);
  await write.upsertHistory(tx, placed);
}

const writers: Record<string, BatchWriter> = {
  // a chain is never removed from the read model (its rows reference it)
  chain_info: async (tx, kind, rows, _c, o) => { if (kind !== 'delete') await write.upsertChains(tx, mapOrReport(rows, mapChain, o)); },
  block: async (tx, kind, rows, _c, o) => {
    if (kind !== 'delete') await write.upsertBlocks(tx, mapOrReport(rows, (r) => mapBlock(r, o.ctx), o));
    else await write.deleteBlocks(tx, rows.map((r) => String(r.chain).toLowerCase()));
  },
  inscriptions: async (tx, kind, rows, _c, o) => {
    if (kind === 'delete') { await write.deleteTicks(tx, ids(rows)); return; }
    for (const d of await write.upsertTicks(tx, mapOrReport(rows, (r) => mapTick(r, o.ctx), o))) o.onDuplicateDeployHash(d);
  },
  balances: writeBalances,
  address_txs: async (tx, kind, rows, _c, o) => {
    if (kind !== 'delete') await write.upsertMovements(tx, await knownTicks(tx, 'address_txs', mapOrReport(rows, (r) => mapMovement(r, o.ctx), o), o));
    else await write.deleteMovements(tx, ids(rows));
  },
  txs: async (tx, kind, rows, _c, o) => {
    if (kind !== 'delete') await write.upsertTransactions(tx, mapOrReport(rows, (r) => mapTransaction(r, o.ctx), o));
    else await write.deleteTransactions(tx, ids(rows));
  },
  utxos: async (tx, kind, rows, _c, o) => {
    if (kind !== 'delete') await write.upsertUtxos(tx, await knownTicks(tx, 'utxos', mapOrReport(rows, (r) => mapUtxo(r, o.ctx), o), o));
    else await write.deleteUtxos(tx, ids(rows));
  },
  balance_txn: writeHistory,
};

async function applyBatch(tx: write.Tx, table: string, kind: ChangeKind, changes: Change[], o: ApplyOptions, shadows: Shadows): Promise<void> {
  const writer = writers[table];
  if (!writer) return;
  let rows = changes.map((c) => c.row);
  if (kind !== 'delete' && table === 'inscriptions') rows = await distinctTicks(tx, rows, o, shadows);
  if (kind !== 'delete' && ['balances', 'address_txs', 'utxos', 'balance_txn'].includes(table)) rows = await notShadowed(tx, table, rows, o, shadows);
  await writer(tx, kind, rows, changes, o);
  o.onApplied(table, rows.length);
}

/** balance_txn rows (ids) whose transaction is not in the read model have no block height: bad rows (the
 *  first throws; with --skip-bad-rows each is reported). The follow's apply and the backfill's move share it. */
export function withoutBlockHeight(ids: string[], o: Pick<ApplyOptions, 'skipBadRows' | 'onBadRow'>): void {
  for (const id of ids) {
    const error = new BadRowError('balance_txn', id, 'no txs row of its chain and tx_hash: its block height is unknown');
    if (!o.skipBadRows) throw error;
    o.onBadRow(error);
  }
}

export async function applyChanges(tx: write.Tx, changes: Change[], options: ApplyOptions): Promise<void> {
  // a balance_txn row takes its block height from its transaction: written after the flush's txs rows;
  // its deletes go first (nothing refers to a history row, and a tick deleted in the same flush needs them gone)
  if (changes.some((c) => c.table === 'balance_txn')) {
    const history = (kind: boolean) => changes.filter((c) => c.table === 'balance_txn' && (c.kind === 'delete') === kind);
    changes = [...history(true), ...changes.filter((c) => c.table !== 'balance_txn'), ...history(false)];
  }
  const shadows: Shadows = { known: null };
  let i = 0;
  while (i < changes.length) {
    const first = changes[i]!;
    let j = i + 1;
    while (j < changes.length && changes[j]!.table === first.table && changes[j]!.kind === first.kind) j++;
    if (!ignoredTables.has(first.table)) await applyBatch(tx, first.table, first.kind, changes.slice(i, j), options, shadows);
    i = j;
  }
}

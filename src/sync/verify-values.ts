// --verify's value comparison: every mapped column of every synced row, compared range by
// range of source ids (--batch-size ids per range: bounded memory on tables of any size). Each range's
// rows are read on both sides, the source's mapped as the sync maps them, and a checksum (SHA-1) of each
// side's canonical text compared first, as pt-table-checksum compares chunks; only a range whose checksums
// differ is narrowed to its rows, and each differing row is named with its column and both values. Balances
// (keyed by tick and address, not by id) are compared by key for each range of source ids.
// `--repair` re-copies exactly the differing rows (the source's, through the follow's upserts; read-model
// rows the source no longer has are deleted), all in one read-model transaction.
import { createHash } from 'node:crypto';
import type { Sql } from '../db/client.js';
import type { Tx } from '../db/writes.js';
import { balancesOf, maxValueId, valueRows, type ValueTable } from './target/verify.js';
import { applyChanges, type ApplyOptions, type Change } from './apply.js';
import {
  mapBalance, mapBalanceTxn, mapMovement, mapTick, mapTransaction, mapUtxo, normalizeDecimal, tickKeyString, type MapContext,
  type SourceRow,
} from './mapping.js';
import type { SourceConnection } from './source/connection.js';
import { beginSnapshot, endSnapshot, sourceMaxId, sourceRowsIn } from './source/reads.js';

export interface ValueDifference {
  table: string;
  /** the source row's id (balances: its id too; the read model keys them by tick and address) */
  id: string;
  /** the column, or 'row' for a row only one side has */
  column: string;
  source: string;
  readModel: string;
}

export interface ValueReport { differences: ValueDifference[]; rowsCompared: number; rangesNarrowed: number; repaired: number | null; truncated: boolean }

interface Spec {
  source: string;
  target: ValueTable;
  map: (row: SourceRow, ctx: MapContext) => object;
  columns: string[];
  decimals: string[];
}

const specs: Spec[] = [
  { source: 'inscriptions', target: 'ticks', map: mapTick, decimals: ['limit_per_mint', 'total_supply'],
    columns: ['chain', 'protocol', 'tick', 'name', 'limit_per_mint', 'deploy_by', 'total_supply', 'deploy_hash', 'deploy_time',
      'transfer_type', 'decimals', 'created_at'] },
  { source: 'txs', target: 'transactions', map: mapTransaction, decimals: ['amt'],
    columns: ['chain', 'protocol', 'block_height', 'position_in_block', 'block_time', 'tx_hash', 'from_address', 'to_address', 'op',
      'tick', 'amt', 'gas', 'gas_price', 'status', 'created_at'] },
  { source: 'address_txs', target: 'address_txs', map: mapMovement, decimals: ['amount'],
    columns: ['chain', 'protocol', 'tick', 'address', 'tx_hash', 'amount', 'event', 'operate', 'created_at'] },
  { source: 'balance_txn', target: 'balance_history', map: mapBalanceTxn, decimals: ['amount', 'balance', 'available'],
    columns: ['chain', 'protocol', 'tick', 'address', 'amount', 'balance', 'available', 'event', 'tx_hash', 'created_at'] },
  { source: 'utxos', target: 'utxos', map: mapUtxo, decimals: ['amount'],
    columns: ['chain', 'protocol', 'tick', 'address', 'root_hash', 'amount', 'status', 'created_at'] },
];

/** At most this many differing rows are listed (and repaired) per run: memory stays bounded. */
const maxDifferences = 10_000;

const text = (v: unknown) => (v === null || v === undefined ? '\\N' : String(v));

/** A row's compared columns as one line (decimals normalised: trailing zeros are not a difference). */
function canonical(spec: Pick<Spec, 'columns' | 'decimals'>, row: Record<string, unknown>): string[] {
  return spec.columns.map((c) => (spec.decimals.includes(c) && row[c] !== null && row[c] !== undefined ? normalizeDecimal(row[c]) : text(row[c])));
}

const checksum = (lines: Iterable<string>) => {
  const h = createHash('sha1');
  for (const l of lines) h.update(l).update('\n');
  return h.digest('hex');
};

type Note = (d: ValueDifference, fix: Change | null) => void;

/**
 * Compares the values of every synced table; with `repair`, re-copies the differing rows in one transaction
 * of `sql` (which must then be writable). The source is read in one consistent snapshot.
 */
export async function verifyValues(conn: SourceConnection, sql: Sql, o: { ctx: MapContext; batchSize: number; repair: boolean }): Promise<ValueReport> {
  const report: ValueReport = { differences: [], rowsCompared: 0, rangesNarrowed: 0, repaired: null, truncated: false };
  const fixes = new Map<string, Change>(); // one per source row
  const note: Note = (d, fix) => {
    if (report.differences.length >= maxDifferences) { report.truncated = true; return; }
    report.differences.push(d);
    if (fix) fixes.set(`${fix.table}\u0000${String(fix.row.id)}`, fix);
  };
  const step = BigInt(o.batchSize);
  await beginSnapshot(conn);
  try {
    for (const spec of specs) {
      const top = [await sourceMaxId(conn, spec.source), await maxValueId(sql, spec.target)].reduce((a, b) => (a > b ? a : b));
      for (let lo = 0n; lo < top && !report.truncated; lo += step) await compareRange(conn, sql, spec, lo, lo + step, o.ctx, report, note);
    }
    await compareBalances(conn, sql, o, step, report, note);
  } finally {
    await endSnapshot(conn).catch(() => {});
  }
  report.repaired = o.repair ? await repair(sql, [...fixes.values()], o.ctx) : null;
  return report;
}

/** One id range of a table: checksums of both sides, narrowed to its rows when they differ. */
async function compareRange(conn: SourceConnection, sql: Sql, spec: Spec, lo: bigint, hi: bigint, ctx: MapContext, report: ValueReport,
  note: Note): Promise<void> {
  const theirs = new Map<string, { raw: SourceRow; line: string[] | null }>();
  for (const raw of await sourceRowsIn(conn, spec.source, lo, hi, false)) {
    let line: string[] | null;
    try { line = canonical(spec, spec.map(raw, ctx) as Record<string, unknown>); } catch { line = null; } // a bad row: never synced
    theirs.set(String(raw.id), { raw, line });
  }
  const mine = new Map((await valueRows(sql, spec.target, String(lo), String(hi))).map((r) => [r.id!, canonical(spec, r)]));
  report.rowsCompared += theirs.size;
  const sideSum = (m: Map<string, string[] | null>) => checksum([...m].filter(([, l]) => l).map(([id, l]) => `${id}\t${l!.join('\t')}`));
  if (sideSum(new Map([...theirs].map(([id, t]) => [id, t.line]))) === sideSum(mine)) return;
  report.rangesNarrowed++;
  const table = `${spec.source} → ${spec.target}`;
  for (const [id, t] of theirs) {
    if (!t.line) continue;
    const m = mine.get(id);
    if (!m) { note({ table, id, column: 'row', source: 'present', readModel: 'missing' }, { table: spec.source, kind: 'insert', row: t.raw }); continue; }
    spec.columns.forEach((c, i) => {
      if (t.line![i] !== m[i]) note({ table, id, column: c, source: t.line![i]!, readModel: m[i]! }, { table: spec.source, kind: 'update', row: t.raw });
    });
  }
  for (const id of mine.keys()) {
    // a bad row in the source is reported by the sync, not here
    if (theirs.has(id)) continue;
    note({ table, id, column: 'row', source: 'missing', readModel: 'present' }, { table: spec.source, kind: 'delete', row: { id } });
  }
}

/** --repair: the differing rows re-copied (deletes first, children before ticks; then the copies, ticks first) in one transaction. */
async function repair(sql: Sql, fixes: Change[], ctx: MapContext): Promise<number> {
  if (!fixes.length) return 0;
  const apply: ApplyOptions = { ctx, skipBadRows: false, onBadRow() {}, onApplied() {}, onDuplicateDeployHash() {} };
  const order = ['inscriptions', 'txs', 'balance_txn', 'address_txs', 'balances', 'utxos'];
  const deletes = fixes.filter((f) => f.kind === 'delete').sort((a, b) => order.indexOf(b.table) - order.indexOf(a.table));
  const copies = fixes.filter((f) => f.kind !== 'delete').sort((a, b) => order.indexOf(a.table) - order.indexOf(b.table));
  await sql.begin((tx) => applyChanges(tx as Tx, [...deletes, ...copies], apply));
  return fixes.length;
}

/** Balances: the source's, range by range of their ids, looked up in the read model by tick and address. */
async function compareBalances(conn: SourceConnection, sql: Sql, o: { ctx: MapContext }, step: bigint, report: ValueReport,
  note: Note): Promise<void> {
  const top = await sourceMaxId(conn, 'balances');
  const key = (k: { chain: string; protocol: string; tick: string }, address: string) => `${tickKeyString(k)}\u0000${address.toLowerCase()}`;
  for (let lo = 0n; lo < top && !report.truncated; lo += step) {
    const found = await sourceRowsIn(conn, 'balances', lo, lo + step);
    const mapped = found.flatMap((raw) => { try { return [{ raw, m: mapBalance(raw, o.ctx) }]; } catch { return []; } });
    const mine = new Map((await balancesOf(sql, mapped.map((x) => x.m))).map((b) => [key(b, b.address_key), b]));
    report.rowsCompared += mapped.length;
    const lines = (xs: string[]) => checksum(xs.sort());
    const theirs = mapped.map((x) => `${key(x.m, x.m.address)}\t${normalizeDecimal(x.m.balance)}\t${normalizeDecimal(x.m.available)}`);
    const ours = [...mine].map(([k, b]) => `${k}\t${normalizeDecimal(b.balance)}\t${normalizeDecimal(b.available)}`);
    if (lines(theirs) === lines(ours)) continue;
    report.rangesNarrowed++;
    for (const { raw, m } of mapped) {
      const b = mine.get(key(m, m.address));
      const id = String(raw.id);
      const fix: Change = { table: 'balances', kind: 'update', row: raw };
      if (!b) { note({ table: 'balances → balances', id, column: 'row', source: 'present', readModel: 'missing' }, fix); continue; }
      for (const c of ['balance', 'available'] as const) {
        if (normalizeDecimal(m[c]) !== normalizeDecimal(b[c])) note({ table: 'balances → balances', id, column: c, source: normalizeDecimal(m[c]), readModel: normalizeDecimal(b[c]) }, fix);
      }
    }
  }
}

export function formatValues(r: ValueReport, limit = 200): string {
  const head = [`values: ${r.rowsCompared} rows compared, every mapped column (${r.rangesNarrowed} id range${r.rangesNarrowed === 1 ? '' : 's'} ` +
    `whose checksums differed narrowed to rows): ${r.differences.length}${r.truncated ? '+' : ''} difference${r.differences.length === 1 ? '' : 's'}`];
  if (r.differences.length) {
    const cols = ['table', 'id', 'column', 'source', 'read model'];
    const cells = r.differences.slice(0, limit).map((d) => [d.table, d.id, d.column, d.source, d.readModel]);
    const widths = cols.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
    const line = (c: string[]) => c.map((x, i) => x.padEnd(widths[i]!)).join('  ').trimEnd();
    head.push(line(cols), ...cells.map(line));
    if (r.differences.length > limit) head.push(`… and ${r.differences.length - limit} more`);
  }
  if (r.repaired !== null) head.push(`repair: ${r.repaired} row${r.repaired === 1 ? '' : 's'} re-copied from the source in one transaction`);
  return head.join('\n');
}

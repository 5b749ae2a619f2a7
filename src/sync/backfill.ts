// The first copy of the source: one consistent snapshot (START TRANSACTION WITH CONSISTENT SNAPSHOT),
// read table by table in primary-key ranges (bounded memory), each range streamed into PostgreSQL with
// COPY on the benchmark loader's bulk path (row triggers off, secondary indexes dropped and rebuilt after,
// counters refreshed once). A range's COPY and the record that it is done commit together, so a crash or
// SIGTERM resumes from the last finished range and never duplicates a row. A resumed backfill reads a
// newer snapshot; the follow starts from the position saved before the first one, and its idempotent
// apply brings rows copied from the older snapshot up to date. balance_txn is copied into an unlogged
// stage and moved into balance_history in one statement that attaches each row's block height and
// interval (moveStagedHistory, src/sync/target/backfill.ts): its rows are written once.
import { availableParallelism } from 'node:os';
import type { Sql } from '../db/client.js';
import { CopyChunks, copyLine } from './target/copy.js';
import { captureIndexes, dropIndexes } from './target/indexes.js';
import type { Tx } from '../db/writes.js';
import {
  analyzeTables, bulkRowCount, completeBackfill, historyStage, linkHistory, moveStagedHistory, refreshTransactionTotals,
  resetLostHistoryStage, restoreDroppedIndexes, withBulkSession, type BulkSession,
} from './target/backfill.js';
import * as state from './target/state.js';
import { progressBar } from '../observability/progress.js';
import { applyChanges, withoutBlockHeight, type ApplyOptions } from './apply.js';
import {
  BadRowError, mapBalance, mapBalanceTxn, mapMovement, mapTick, mapTransaction, mapUtxo, tickKeyString, type SourceRow,
} from './mapping.js';
import { caseDuplicate, ShadowedTicks, TickKeys } from './case-ticks.js';
import { crossCheckStats } from './cross-check.js';
import { currentPosition, samePosition, sessionSnapshotPosition, snapshotBinlogPosition, sourceNow } from './source/cdc.js';
import { beginSnapshot, eachSourceRow, endSnapshot, sourceChainsAndBlocks, sourceIds, sourceMaxId } from './source/reads.js';
import { connectSource, type SourceConnection, type SourceTarget } from './source/connection.js';
import { estimateRows } from './source/schema.js';
import type { Logger } from '../observability/logger.js';
import type { SyncMetrics } from './metrics.js';

/** A text value for COPY's text format (backslash, tab, newline, carriage return escaped). */
const copyEscapes = /[\\\t\n\r]/;
/** Ranges read and mapped ahead of the COPY running (each a few MB of encoded lines). */
const copiesAhead = 2;
const esc = (s: string) => (copyEscapes.test(s) ? copyLine([s]).slice(0, -1) : s);

/** Source tables copied by id range, in dependency order (ticks first), with the read-model table each fills
 *  (through `stage`, when it has one: see moveStagedHistory). */
const rangeTables: { source: string; target: string; stage?: string; columns: string[]; needsTicks: boolean }[] = [
  { source: 'inscriptions', target: 'ticks', needsTicks: false, columns: ['id', 'chain', 'protocol', 'tick', 'name', 'limit_per_mint',
    'deploy_by', 'total_supply', 'deploy_hash', 'deploy_time', 'transfer_type', 'decimals', 'created_at', 'updated_at'] },
  { source: 'txs', target: 'transactions', needsTicks: false, columns: ['id', 'chain', 'protocol', 'block_height', 'position_in_block',
    'block_time', 'tx_hash', 'from_address', 'to_address', 'op', 'tick', 'amt', 'gas', 'gas_price', 'status', 'created_at', 'updated_at'] },
  // after txs: moved from its stage with each row's block height taken from the transactions (and its
  // intervals) while the next tables are copied, its indexes built there too
  { source: 'balance_txn', target: 'balance_history', stage: historyStage, needsTicks: true, columns: ['id', 'tick_id', 'address', 'chain',
    'amount', 'balance', 'available', 'event', 'tx_hash', 'created_at'] },
  { source: 'address_txs', target: 'address_txs', needsTicks: true, columns: ['id', 'tick_id', 'address', 'tx_hash', 'amount', 'event',
    'operate', 'created_at', 'updated_at'] },
  // last of the big ones: the finish waits for its indexes, the quickest to build
  { source: 'balances', target: 'balances', needsTicks: true, columns: ['tick_id', 'address', 'balance', 'available', 'updated_at'] },
  { source: 'utxos', target: 'utxos', needsTicks: true, columns: ['id', 'tick_id', 'address', 'root_hash', 'amount', 'status',
    'created_at', 'updated_at'] },
];
/** Tables whose secondary indexes are dropped for the copy (ticks keeps its keys: the others reference it). */
const bulkTargets = ['balances', 'address_txs', 'transactions', 'utxos', 'balance_history'];
/** Polling: insert-only tables are followed by id watermark; the tables updated in place by updated_at
 *  window (their ids are no watermark: an upsert that updates still burns an auto-increment id). */
export const idTables = ['inscriptions', 'address_txs', 'txs', 'balance_txn'];
export const windowTables = ['balances', 'utxos'];
/** How far below the snapshot's highest id missing ids are remembered as gaps (rows committed late). */
const gapScan = 10_000n;

export interface BackfillContext {
  sql: Sql;
  databaseUrl: string;
  target: SourceTarget;
  mode: 'binlog' | 'polling';
  batchSize: number;
  pollOverlapS: number;
  apply: ApplyOptions;
  log: Logger;
  metrics: SyncMetrics;
  stopping: () => boolean;
}

async function missingIds(conn: SourceConnection, table: string, top: bigint): Promise<Record<string, number>> {
  const from = top > gapScan ? top - gapScan : 0n;
  const seen = await sourceIds(conn, table, from, top);
  const gaps: Record<string, number> = {};
  const now = Date.now();
  for (let i = from + 1n; i <= top; i++) if (!seen.has(String(i))) gaps[String(i)] = now;
  return gaps;
}

function utcMinus(wall: string, seconds: number): string {
  return new Date(Date.parse(`${wall.replace(' ', 'T')}Z`) - seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** Copies the source; returns 'stopped' when SIGTERM arrived between ranges. */
export async function backfill(c: BackfillContext): Promise<'done' | 'stopped'> {
  const current = await state.readSourceState(c.sql);
  if (current?.backfill_done) return 'done';
  c.metrics.setMode('backfill');
  // tables finished while the copy went on (a resumed run finishes those of the earlier run in the finish)
  const background: Background = { tables: new Set(), finishing: Promise.resolve() };
  const conn = await connectSource(c.target);
  let second: SourceConnection | null = null;
  try {
    const before = c.mode === 'binlog' ? await currentPosition(conn) : null;
    const dbNow = await sourceNow(conn);
    second = await beginSnapshots(c, conn);
    const position = await snapshotBinlogPosition(conn, before);

    const plan = await readOrPlanBackfill(c, conn, { dbNow, position, lanes: second ? 2 : 1 });
    await copySmallTables(c, conn);

    // a table copied whole is finished (the history linked, its indexes rebuilt) on another connection
    // while the next ones are copied: the copy leaves part of the two cores idle (the sync, PostgreSQL's
    // COPY and the source each wait on the others), which the finish alone would only use at the end. The
    // last table with rows to copy is left to the finish (its indexes two at a time).
    // inscriptions differing from an earlier one only in case (src/sync/case-ticks.ts), and their rows
    const shadowed = new ShadowedTicks(await state.readShadowedTicks(c.sql));
    let transactionsCopied!: (copied: boolean) => void;
    const run: CopyRun = { c, plan, background, shadowed, ticks: null, failed: false,
      transactions: (plan.get('txs')?.done ?? true) ? Promise.resolve(true) : new Promise((resolve) => { transactionsCopied = resolve; }),
      transactionsCopied: (copied) => transactionsCopied?.(copied) };
    const stopped = await withBulkSession(c.databaseUrl, async (bulk) => {
      if (await copyLane(run, conn, bulk, rangeTables.filter((t) => t.source === 'inscriptions'))) return true;
      // the others in two lanes at once when a second connection holds the same snapshot (txs and balances
      // on this one, the history, address_txs and utxos on the other), else one after the other here
      const rest = rangeTables.filter((t) => t.source !== 'inscriptions');
      const lane = second ? rest.filter((t) => secondLane.has(t.source)) : [];
      const lanes = await Promise.allSettled([
        copyLane(run, conn, bulk, rest.filter((t) => !lane.includes(t))),
        lane.length ? withBulkSession(c.databaseUrl, (bulk2) => copyLane(run, second!, bulk2, lane)) : false,
      ].map((p) => Promise.resolve(p).catch((error: unknown) => { run.failed = true; throw error; })));
      // the history's move, waiting for the transactions, does not run when the copy stopped or failed before them
      run.transactionsCopied(false);
      for (const r of lanes) if (r.status === 'rejected') throw r.reason;
      return lanes.some((r) => r.status === 'fulfilled' && r.value);
    }).catch(async (error: unknown) => {
      await background.finishing.catch(() => {});
      throw error;
    });
    if (stopped) await background.finishing;
    if (stopped) return 'stopped';
    await endSnapshot(conn);
  } finally {
    await conn.end().catch(() => {});
    await second?.end().catch(() => {});
  }
  await finish(c, background);
  return 'done';
}

/** The backfill's ranges; on the first start they are fixed first, with the follow's starting point, the
 *  polling watermarks and the indexes dropped for the copy. */
async function readOrPlanBackfill(c: BackfillContext, conn: SourceConnection,
  at: { dbNow: string; position: Awaited<ReturnType<typeof snapshotBinlogPosition>>; lanes: number }): Promise<Map<string, state.BackfillRange>> {
  const { dbNow, position, lanes } = at;
  const plan = await state.readBackfill(c.sql);
  if (plan.size > 0) {
    c.log.info({ lanes, resumeFrom: Object.fromEntries([...plan].map(([k, v]) => [k, v.last_id])) }, 'backfill resumes');
    return plan;
  }
  const tops = new Map<string, bigint>();
  for (const t of rangeTables) tops.set(t.source, await sourceMaxId(conn, t.source));
  const gaps = new Map<string, Record<string, number>>();
  for (const t of idTables) gaps.set(t, await missingIds(conn, t, tops.get(t)!));
  const defs = (await bulkRowCount(c.sql)) === 0n ? await captureIndexes(c.sql, bulkTargets) : [];
  await c.sql.begin(async (tx) => {
    for (const t of rangeTables) await state.planBackfill(tx, t.source, String(tops.get(t.source)));
    await state.savePosition(tx, { mode: c.mode, file: position?.file ?? null, pos: position?.pos ?? null, gtid: position?.gtid ?? null });
    for (const t of idTables) {
      await state.savePollState(tx, { source_table: t, high_id: String(tops.get(t)), gaps: gaps.get(t)!, window_from: null });
    }
    for (const t of windowTables) {
      await state.savePollState(tx, { source_table: t, high_id: '0', gaps: {}, window_from: utcMinus(dbNow, c.pollOverlapS) });
    }
    await state.saveDroppedIndexes(tx, defs);
    await dropIndexes(tx as unknown as Sql, defs);
  });
  c.log.info({ position, lanes, tables: Object.fromEntries([...tops].map(([k, v]) => [k, String(v)])), droppedIndexes: defs.length },
    'backfill planned');
  return state.readBackfill(c.sql);
}

/** The two small tables, copied whole through the follow's upserts. */
async function copySmallTables(c: BackfillContext, conn: SourceConnection): Promise<void> {
  const { chains: chainRows, blocks: blockRows } = await sourceChainsAndBlocks(conn);
  await c.sql.begin(async (tx) => {
    await applyChanges(tx as Tx, [
      ...chainRows.map((row) => ({ table: 'chain_info', kind: 'insert' as const, row })),
      ...blockRows.map((row) => ({ table: 'block', kind: 'insert' as const, row })),
    ], { ...c.apply, onApplied: (table, n) => c.metrics.rowsApplied.inc({ table, phase: 'backfill' }, n) });
  });
}

/** Tables copied on the second lane (see beginSnapshots), beside txs and then balances on the first: about
 *  as much work on each. The history's move waits for the transactions (see copyLane); balances, whose
 *  indexes are the quickest to build, is last on its lane. */
const secondLane = new Set(['balance_txn', 'address_txs', 'utxos']);

/**
 * Starts the backfill's snapshot on `conn` and, when it can be shown to be the same, on a second connection
 * (returned; else null): the two lanes then copy one source state. The snapshots start together and MariaDB
 * names the binlog position each holds (the same one: no commit between them). MySQL names none (the end
 * of its binlog may already hold a transaction the engine has not made visible yet), and without a binlog
 * or on SQLite nothing tells: one connection copies everything, as it does when three tries found commits
 * between the two.
 */
async function beginSnapshots(c: BackfillContext, conn: SourceConnection): Promise<SourceConnection | null> {
  const binlog = conn.dialect === 'mysql' && (await currentPosition(conn).catch(() => null)) !== null;
  const second = binlog ? await connectSource(c.target).catch(() => null) : null;
  if (!second) {
    await beginSnapshot(conn, { repeatableRead: true });
    return null;
  }
  for (let attempt = 1; ; attempt++) {
    await Promise.all([beginSnapshot(conn, { repeatableRead: true }), beginSnapshot(second, { repeatableRead: true })]);
    const [a, b] = await Promise.all([sessionSnapshotPosition(conn), sessionSnapshotPosition(second)]);
    if (a && b && samePosition(a, b)) return second;
    if (!a || !b || attempt >= 3) {
      if (a && b) c.log.info('backfill: the source committed between the two lanes\' snapshots three times: one lane copies every table');
      await endSnapshot(second).catch(() => {});
      await second.end().catch(() => {});
      return null; // conn's snapshot stays
    }
    await Promise.all([endSnapshot(conn), endSnapshot(second)]);
  }
}

/** What the lanes of one backfill share. */
interface CopyRun {
  c: BackfillContext;
  plan: Map<string, state.BackfillRange>;
  background: Background;
  shadowed: ShadowedTicks;
  /** tick id per key, read once the inscriptions are copied */
  ticks: Promise<Map<string, string>> | null;
  /** tables copied whole by this run */
  copied?: Set<string>;
  /** a lane failed: the other stops at its next range */
  failed: boolean;
  /** resolves true once txs is copied whole (the history's move joins its rows), false if the lanes ended before */
  transactions: Promise<boolean>;
  transactionsCopied: (copied: boolean) => void;
}

/**
 * Copies `tables` one after the other on one source connection and bulk session; true when stopped. A table
 * copied whole while another (in either lane) still has rows to copy is finished in the background; the
 * last one is left to the finish.
 */
async function copyLane(run: CopyRun, conn: SourceConnection, bulk: BulkSession, tables: typeof rangeTables): Promise<boolean> {
  const { c, plan, background } = run;
  const copied = (run.copied ??= new Set());
  const lane = { ...c, stopping: () => c.stopping() || run.failed };
  for (const t of tables) {
    let p = plan.get(t.source);
    // a backfill planned before this table was synced (resumed across an upgrade) leaves it out
    if (!p || p.done) continue;
    if (t.stage && await resetLostHistoryStage(c.sql, t.source)) {
      c.log.warn({ table: t.source, rowsRecorded: p.rows_copied }, 'backfill: the staged rows were lost (server crash): copying the table again');
      p = (await state.readBackfill(c.sql)).get(t.source)!;
    }
    const ticks = t.needsTicks
      ? await (run.ticks ??= bulk.ticks().then((rows) => new Map(rows.map((x) => [tickKeyString(x), x.id])))) : null;
    const started = performance.now();
    const shadows: state.ShadowedTick[] = [];
    const stop = await copyTable(lane, conn, bulk, t, p, ticks, { shadowed: run.shadowed, shadows });
    await state.recordShadowedTicks(c.sql, shadows);
    if (stop) return true;
    copied.add(t.source);
    if (t.source === 'txs') run.transactionsCopied(true);
    c.log.info({ table: t.source, seconds: Math.round(performance.now() - started) / 1000 }, 'backfill table copied');
    const more = rangeTables.some((x) => {
      const q = plan.get(x.source);
      return !copied.has(x.source) && q && !q.done && BigInt(q.max_id) > BigInt(q.last_id.split('.')[0]!);
    });
    if (more && bulkTargets.includes(t.target)) {
      const range = p;
      background.tables.add(t.target);
      // the history's move needs every transaction (on the other lane, it may still be copying)
      const after = t.stage ? Promise.all([background.finishing, run.transactions]).then(([, ready]) => ready) : background.finishing.then(() => true);
      background.finishing = after.then((ready) => (ready ? finishTable(c, t.target, range) : undefined));
      background.finishing.catch(() => {}); // awaited by the finish (or below, when the copy stops or fails)
    }
  }
  return false;
}

interface Background {
  /** the tables handed to `finishing` (their counters that read them alone recomputed there) */
  tables: Set<string>;
  finishing: Promise<void>;
}

/** Staged history rows whose transaction is not among the copied ones: bad rows (the first stops the
 *  backfill, the move rolled back; with --skip-bad-rows each, up to the first 1,000, is reported and left out). */
const withoutTransaction = (c: BackfillContext) => (ids: string[]) => withoutBlockHeight(ids, c.apply);

/** One table's part of the finish, run once its copy is complete: the staged history moved in with its
 *  intervals, then the table's dropped indexes rebuilt, then ANALYZE (and the transactions' totals). */
async function finishTable(c: BackfillContext, table: string, p: state.BackfillRange): Promise<void> {
  const started = performance.now();
  if (table === 'balance_history') await moveStagedHistory(c.sql, p.source_table, p.max_id, withoutTransaction(c));
  await restoreDroppedIndexes(c.sql, 1, { add() {} }, [table]);
  // after its indexes (ANALYZE gathers statistics of expression indexes too)
  await analyzeTables(c.sql, [table]);
  if (table === 'transactions') await refreshTransactionTotals(c.sql);
  c.log.info({ table, seconds: Math.round(performance.now() - started) / 1000 }, 'backfill table finished');
}

type RangeTable = (typeof rangeTables)[number];
type TickCases = { shadowed: ShadowedTicks; shadows: state.ShadowedTick[] };

async function copyTable(c: BackfillContext, conn: SourceConnection, bulk: BulkSession,
  t: RangeTable, p: state.BackfillRange, ticks: Map<string, string> | null, cases: TickCases): Promise<boolean> {
  const top = BigInt(p.max_id);
  let last = BigInt(p.last_id.split('.')[0]!);
  const estimate = Math.max(await estimateRows(conn, t.source), Number(p.rows_copied), 1);
  const bar = progressBar(t.source, estimate);
  bar.add(Number(p.rows_copied));
  const keys = t.source === 'inscriptions' ? new TickKeys((await bulk.ticks()).map((x) => [tickKeyString(x), x.id])) : null;
  const line = copyLineOf(t, c.apply.ctx, keys, ticks, cases);
  const copies: Promise<void>[] = [];
  let copying: Promise<void> = Promise.resolve();
  try {
    while (last < top) {
      if (c.stopping()) {
        await copying;
        return true;
      }
      const r = await readRange(c, conn, t, line, last, top);
      while (copies.length >= copiesAhead) await copies.shift();
      // the range and the record of it commit together, after the ranges before it
      // (a staged table is done once moved from its stage)
      copying = copying.then(() => bulk.copyRange(t.stage ?? t.target, t.columns, r.chunks,
        { source: t.source, lastId: String(r.end), done: !t.stage && r.end >= top, rows: r.lines })
        .catch((error: unknown) => { throw namedCopyError(t.source, r.ids, error); })).then(() => {
        c.metrics.rowsApplied.inc({ table: t.source, phase: 'backfill' }, r.lines);
        bar.add(r.rows);
      });
      copying.catch(() => {}); // awaited before the next range is read past the limit, or at the end
      copies.push(copying);
      last = r.end;
    }
    await copying;
    if (top === 0n || last >= top) await bulk.advance(t.source, String(top), !t.stage);
    return false;
  } finally {
    // a failure while a COPY runs: let it end before the bulk connection is released
    await copying.catch(() => {});
    bar.stop();
  }
}

/**
 * The COPY line of one source row of `t`. The text is built directly: only free text (addresses, names,
 * hashes kept as the source wrote them) can hold a character COPY escapes; ids, heights, decimals, times
 * and enumerations are written as they are.
 */
function copyLineOf(t: RangeTable, ctx: ApplyOptions['ctx'], keys: TickKeys | null, ticks: Map<string, string> | null,
  cases: TickCases): (row: SourceRow) => string {
  const tickId = (row: SourceRow, key: { chain: string; protocol: string; tick: string; id?: string; address?: string }) => {
    const id = ticks!.get(tickKeyString(key));
    if (!id) throw new BadRowError(t.source, String(row.id), `no inscription ${key.chain}/${key.protocol}/${key.tick}`);
    return id;
  };
  return (row: SourceRow): string => {
    if (t.needsTicks && cases.shadowed.size) cases.shadowed.check(t.source, row);
    switch (t.source) {
      case 'inscriptions': {
        const m = mapTick(row, ctx);
        const first = keys!.claim(row);
        if (first !== null) {
          const { error, shadow } = caseDuplicate(row, first);
          cases.shadowed.add(shadow);
          cases.shadows.push(shadow);
          throw error;
        }
        return copyLine([m.id, m.chain, m.protocol, m.tick, m.name, m.limit_per_mint, m.deploy_by, m.total_supply, m.deploy_hash,
          m.deploy_time, m.transfer_type, m.decimals, m.created_at, m.updated_at]);
      }
      case 'balances': {
        const m = mapBalance(row, ctx);
        return `${tickId(row, m)}\t${esc(m.address)}\t${m.balance}\t${m.available}\t${m.updated_at}\n`;
      }
      case 'address_txs': {
        const m = mapMovement(row, ctx);
        return `${m.id}\t${tickId(row, m)}\t${esc(m.address)}\t${esc(m.tx_hash)}\t${m.amount}\t${m.event}\t${esc(m.operate)}\t${m.created_at}\t${m.updated_at}\n`;
      }
      case 'txs': {
        const m = mapTransaction(row, ctx);
        return `${m.id}\t${esc(m.chain)}\t${esc(m.protocol)}\t${m.block_height}\t${m.position_in_block}\t${m.block_time}\t${esc(m.tx_hash)}\t${
          esc(m.from_address)}\t${esc(m.to_address)}\t${esc(m.op)}\t${esc(m.tick)}\t${m.amt}\t${m.gas}\t${m.gas_price}\t${m.status}\t${
          m.created_at}\t${m.updated_at}\n`;
      }
      case 'balance_txn': {
        // (its block height is attached when it moves from the stage: moveStagedHistory)
        const m = mapBalanceTxn(row, ctx);
        return `${m.id}\t${tickId(row, m)}\t${esc(m.address)}\t${esc(m.chain)}\t${m.amount}\t${m.balance}\t${m.available}\t${m.event}\t${
          esc(m.tx_hash)}\t${m.created_at}\n`;
      }
      default: {
        const m = mapUtxo(row, ctx);
        return copyLine([m.id, tickId(row, m), m.address, m.root_hash, m.amount, m.status, m.created_at, m.updated_at]);
      }
    }
  };
}

/**
 * Reads and maps one range from `from`: each row becomes its COPY line, encoded into Buffers, as it is
 * decoded (no row object outlives the young generation); the COPYs of the ranges before it run meanwhile
 * (one at a time on the bulk connection, at most `copiesAhead` ranges waiting: a few MB of Buffers).
 */
async function readRange(c: BackfillContext, conn: SourceConnection, t: RangeTable, line: (row: SourceRow) => string,
  from: bigint, top: bigint) {
  const out = new CopyChunks();
  // the source id of each COPY line: a row the read model refuses is named by it (namedCopyError)
  const ids: string[] = [];
  let rows = 0;
  let lastRowId: unknown = null;
  await eachSourceRow(conn, t.source, !t.stage, { from, top, limit: c.batchSize },
    (row) => {
      rows++;
      lastRowId = row.id;
      try {
        out.push(line(row));
        ids.push(String(row.id));
      } catch (error) {
        if (!(error instanceof BadRowError) || !c.apply.skipBadRows) throw error;
        c.apply.onBadRow(error);
      }
    });
  return { chunks: out.done(), ids, lines: out.lines, rows, end: rows < c.batchSize ? top : BigInt(String(lastRowId)) };
}

/**
 * A COPY the read model refused for one of its rows (a value out of a column's range, a key it already
 * holds: PostgreSQL classes 22 and 23), named by the source row: the error's `where` gives the line ("COPY
 * transactions, line 3, column position_in_block: …") and, for a key, `detail` its columns ("Key (chain,
 * protocol, tick)=(…) already exists."). Any other error is returned as it is.
 */
export function namedCopyError(table: string, ids: readonly string[], error: unknown): unknown {
  const e = error as { code?: string; where?: string; detail?: string; message?: string };
  const line = /, line (\d+)/.exec(e?.where ?? '');
  if (!/^2[23]/.test(e?.code ?? '') || !line) return error;
  const column = /, column (\w+)/.exec(e.where ?? '')?.[1] ?? /^Key \(([^)]+)\)/.exec(e.detail ?? '')?.[1] ?? 'unknown';
  return new BadRowError(table, ids[Number(line[1]) - 1] ?? 'unknown', `${column}: the read model refused it: ${e.message}${
    e.detail ? ` (${e.detail})` : ''}`, column);
}

/** Moves the staged history into balance_history with its intervals unless done while the copy went on,
 *  rebuilds the dropped indexes (each only if still missing: a
 *  resumed finish skips the built ones) while the counters are recomputed, then re-attaches the keys and
 *  marks the backfill done with the counters. Phases in the log: history, then indexes and counters (each from
 *  the end of the history: they overlap; counters includes the wait for the indexes), analyze. */
async function finish(c: BackfillContext, background: Background): Promise<void> {
  const phases: Record<string, number> = {};
  let t0 = performance.now();
  const since = (from: number) => Math.round(performance.now() - from) / 1000;
  if (!background.tables.has('balance_history')) {
    // the staged history moved in with its intervals; one moved by an earlier run that stopped before
    // the end, or copied whole by an older version, linked over all of it (rewrites only what differs)
    const history = (await state.readBackfill(c.sql)).get('balance_txn');
    if (history && !history.done) await moveStagedHistory(c.sql, history.source_table, history.max_id, withoutTransaction(c));
    else await linkHistory(c.sql);
  }
  phases.history = since(t0);
  t0 = performance.now();
  const defs = await state.readDroppedIndexes(c.sql);
  const bar = progressBar('indexes', Math.max(1, defs.length), 'indexes');
  try {
    // the tables the copy left unfinished (their keys are attached with the counters, below)…
    const rest = [...new Set(defs.map((d) => d.table_name))].filter((x) => !background.tables.has(x));
    const builds = restoreDroppedIndexes(c.sql, Math.min(4, availableParallelism()), bar, rest, false)
      .then(() => { phases.indexes = since(t0); });
    builds.catch(() => {}); // awaited in completeBackfill
    // …beside what is still running in the background (its keys attached there, before the counters'
    // transaction holds a lock on any of the tables)
    await background.finishing.catch(async (error: unknown) => {
      await builds.catch(() => {});
      throw error;
    });
    bar.add(defs.filter((d) => background.tables.has(d.table_name)).length);
    const totals = background.tables.has('transactions') ? 'fresh' : 'stale';
    for (const d of await completeBackfill(c.sql, builds, bar, totals)) c.apply.onDuplicateDeployHash(d);
    phases.counters = since(t0);
  } finally {
    bar.stop();
  }
  t0 = performance.now();
  // the tables finished in the background were analysed there
  await analyzeTables(c.sql, ['ticks', ...bulkTargets.filter((x) => !background.tables.has(x))]);
  phases.analyze = since(t0);
  t0 = performance.now();
  await crossCheckStats(c.sql, c.target, c.log);
  phases.crossCheck = since(t0);
  const cpu = process.cpuUsage();
  c.log.info({ seconds: phases, syncCpuSeconds: Math.round((cpu.user + cpu.system) / 1e4) / 100 }, 'backfill done');
}

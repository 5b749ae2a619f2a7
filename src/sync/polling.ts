// Follow by polling, for sources whose binlog is off or not readable. Each cycle reads one consistent
// snapshot of the source and applies what changed as one PostgreSQL transaction, with the watermarks:
// - insert-only tables: rows above the id watermark, plus the ids below it not seen yet (gaps: a row whose
//   transaction committed after a higher id's did); a gap is forgotten after --gap-expiry-s (a rolled-back
//   insert never fills its id);
// - balances and utxos (updated in place): rows whose updated_at (the database's clock) falls in a window
//   starting --poll-overlap-s before the previous cycle (statement time is not commit time);
// - chain_info and block: read whole (a lowered or deleted block row is seen too).
// Deletes of other rows are invisible here; see the README.
import type { Sql } from '../db/client.js';
import { changedBalances, type Tx } from '../db/sync-apply.js';
import * as state from '../db/sync-state.js';
import { applyChanges, type ApplyOptions, type Change } from './apply.js';
import { idTables, windowTables } from './backfill.js';
import { currentZoneMinutes, mapBalance, mapBlock, mapChain, type SourceRow } from './mapping.js';
import { sweepDeletes } from './deletes.js';
import { resyncChain } from './rewind.js';
import { sourceNow } from './source/cdc.js';
import { selectRows } from './source/schema.js';
import { connectSource, type SourceConnection, type SourceTarget } from './source/connection.js';
import type { Logger } from './log.js';
import type { SyncMetrics } from './metrics.js';

export interface PollingContext {
  sql: Sql;
  target: SourceTarget;
  apply: ApplyOptions;
  log: Logger;
  metrics: SyncMetrics;
  intervalMs: number;
  overlapS: number;
  gapExpiryS: number;
  /** seconds between sweeps for rows deleted in the source */
  reconcileIntervalS: number;
  batchSize: number;
  stopSignal: Promise<void>;
  once: boolean;
}

/** Missing ids remembered per table at most. */
const maxGaps = 100_000;

const shift = (wall: string, seconds: number) =>
  new Date(Date.parse(`${wall.replace(' ', 'T')}Z`) + seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');

/** One cycle; returns whether a table had more new rows than one batch (poll again at once). */
async function pollOnce(c: PollingContext, conn: SourceConnection): Promise<boolean> {
  const polls = await state.readPollState(c.sql);
  const changes: Change[] = [];
  const next: state.PollState[] = [];
  let more = false;
  const rewinds = new Map<string, string | null>();
  await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
  let dbNow: string;
  try {
    dbNow = await sourceNow(conn);
    // whole reads, written only where they differ (an unchanged write would still bump the data version)
    const known = new Map((await c.sql<{ chain: string; j: string }[]>`
      SELECT chain, concat_ws('|', chain_id, outer_chain, name, logo, network_id, ext) AS j FROM chains`).map((r) => [r.chain, r.j]));
    const [chains] = await conn.query('SELECT * FROM chain_info ORDER BY id');
    for (const row of chains as SourceRow[]) {
      const m = mapChain(row);
      if (known.get(m.chain) !== [m.chain_id, m.outer_chain, m.name, m.logo, m.network_id, m.ext].join('|')) {
        changes.push({ table: 'chain_info', kind: 'insert', row });
      }
    }
    const indexed = new Map((await c.sql<{ chain: string; j: string }[]>`
      SELECT chain, block_number::text || '|' || (extract(epoch FROM block_time) * 1000)::bigint AS j FROM indexed_blocks`)
      .map((r) => [r.chain, r.j]));
    const [blocks] = await conn.query('SELECT * FROM block ORDER BY chain');
    const present = new Set((blocks as SourceRow[]).map((b) => String(b.chain).toLowerCase()));
    for (const row of blocks as SourceRow[]) {
      const m = mapBlock(row, c.apply.ctx);
      const was = indexed.get(m.chain);
      if (was !== `${m.block_number}|${Date.parse(m.block_time)}`) changes.push({ table: 'block', kind: 'update', row });
      // the height went down: a manual rewind
      if (was !== undefined && BigInt(was.split('|')[0]!) > BigInt(m.block_number)) rewinds.set(m.chain, m.block_number);
    }
    for (const chain of indexed.keys()) {
      if (!present.has(chain)) {
        changes.push({ table: 'block', kind: 'delete', row: { chain } });
        rewinds.set(chain, null);
      }
    }
    const now = Date.now();
    for (const table of idTables) {
      const s = polls.get(table) ?? { source_table: table, high_id: '0', gaps: {}, window_from: null };
      const high = BigInt(s.high_id.split('.')[0]!);
      const [fresh] = await conn.query(`${selectRows(table)} WHERE id > ? ORDER BY id LIMIT ?`, [String(high), c.batchSize]);
      const rows = fresh as SourceRow[];
      if (rows.length === c.batchSize) more = true;
      const gaps = { ...s.gaps };
      const gapIds = Object.keys(gaps);
      let late: SourceRow[] = [];
      if (gapIds.length) {
        const [found] = await conn.query(`${selectRows(table)} WHERE id IN (?) ORDER BY id`, [gapIds]);
        late = found as SourceRow[];
        for (const r of late) delete gaps[String(r.id)];
        if (late.length) c.log.info({ table, ids: late.map((r) => String(r.id)) }, 'rows committed late below the watermark');
      }
      let top = high;
      for (const r of rows) {
        const id = BigInt(String(r.id));
        for (let missing = top + 1n; missing < id; missing++) gaps[String(missing)] = now;
        top = id;
      }
      for (const [id, since] of Object.entries(gaps)) if (now - since > c.gapExpiryS * 1000) delete gaps[id];
      const ids = Object.keys(gaps);
      if (ids.length > maxGaps) {
        // a burst of rolled-back inserts: keep the newest gaps, say so
        for (const id of ids.slice(0, ids.length - maxGaps)) delete gaps[id];
        c.log.warn({ table, dropped: ids.length - maxGaps }, 'too many missing ids to track: the oldest are forgotten');
      }
      for (const row of [...late, ...rows]) changes.push({ table, kind: 'insert', row });
      next.push({ source_table: table, high_id: String(top), gaps, window_from: null });
    }
    for (const table of windowTables) {
      const s = polls.get(table);
      const windowFrom = s?.window_from ?? shift(dbNow, -c.overlapS);
      // updates are stamped by the database's clock, inserts by the indexer host's (its zone's wall-clock
      // time): the window is read on both clocks
      const zone = currentZoneMinutes(c.apply.ctx) * 60;
      const [updated] = await conn.query(
        `SELECT * FROM \`${table}\` WHERE (updated_at >= ? AND updated_at <= ?) OR (updated_at >= ? AND updated_at <= ?) ORDER BY id`,
        [windowFrom, shift(dbNow, 1), shift(windowFrom, zone), shift(dbNow, 1 + zone)]);
      let rows = updated as SourceRow[];
      if (table === 'balances') {
        const mapped = rows.flatMap((row) => { try { return [{ ...mapBalance(row), row }]; } catch { return []; } });
        const changed = new Set((await changedBalances(c.sql, mapped)).map((m) => m.row));
        const mappable = new Set(mapped.map((m) => m.row));
        // unchanged rows are left out; unmappable ones go on to be reported by the apply
        rows = rows.filter((row) => changed.has(row) || !mappable.has(row));
      }
      for (const row of rows) changes.push({ table, kind: 'update', row });
      next.push({ source_table: table, high_id: '0', gaps: {}, window_from: shift(dbNow, -c.overlapS) });
    }
  } finally {
    await conn.query('COMMIT');
  }
  await c.sql.begin(async (tx) => {
    await applyChanges(tx as Tx, changes, c.apply);
    for (const s of next) await state.savePollState(tx, s);
    await state.savePosition(tx, { mode: 'polling', sourceTime: new Date(`${dbNow!.replace(' ', 'T')}Z`) });
  });
  for (const [chain, height] of rewinds) await resyncChain(c.sql, conn, chain, height, c.apply, c.log);
  c.metrics.transactions.inc();
  c.metrics.lastApplied.set(Date.now() / 1000);
  return more;
}

export async function followPolling(c: PollingContext): Promise<void> {
  c.metrics.setMode('polling');
  let stopped = false;
  let wake: (() => void) | null = null;
  void c.stopSignal.then(() => { stopped = true; wake?.(); });
  const conn = await connectSource(c.target);
  c.log.info({ intervalMs: c.intervalMs, overlapS: c.overlapS }, 'polling follow starts');
  let lastSweep = Date.now();
  try {
    while (!stopped) {
      const started = Date.now();
      const more = await pollOnce(c, conn);
      if (Date.now() - lastSweep >= c.reconcileIntervalS * 1000) {
        await sweepDeletes(c.sql, conn, c.log);
        lastSweep = Date.now();
      }
      c.metrics.lagSeconds.set(more ? c.intervalMs / 1000 : 0);
      if (more) continue;
      if (c.once) return;
      const wait = Math.max(0, c.intervalMs - (Date.now() - started));
      await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, wait); });
    }
  } finally {
    await conn.end().catch(() => {});
  }
}

// Follow by polling, for sources whose binlog is off or not readable. Each cycle reads one consistent
// snapshot of the source and applies what changed as one PostgreSQL transaction, with the watermarks:
// - insert-only tables: rows above the id watermark, plus the ids below it not seen yet (gaps: a row whose
//   transaction committed after a higher id's did); a gap is forgotten after --gap-expiry-s (a rolled-back
//   insert never fills its id);
// - balances (updated in place; the indexer does not index updated_at, so reading them by it scans the whole
//   table): the rows keyed by the (chain, protocol, tick, address) of the new address_txs and txs rows, read
//   by the source's unique key (the indexer writes a balance in the flush that adds its movements);
// - balances and utxos, as a safety net for changes that derivation misses (a hand edit, an indexer that
//   writes a balance without a movement): a sweep that reads --poll-sweep-ids ids per cycle, by primary-key
//   range, keeping the rows whose updated_at (on both clocks) is at or after the start of the previous
//   sweep pass minus --poll-overlap-s (statement time is not commit time); a pass ends at the highest id;
// - chain_info and block: read whole (a lowered or deleted block row is seen too).
// Balances equal to the read model's are left out (writing them would bump the data version). Deletes of
// other rows are invisible here; see docs/sync.md.
import type { Sql } from '../db/client.js';
import type { Tx } from '../db/writes.js';
import { chainFingerprints, changedBalances, indexedFingerprints } from './target/compare.js';
import * as state from './target/state.js';
import { applyChanges, type ApplyOptions, type Change } from './apply.js';
import { idTables, windowTables } from './backfill.js';
import { currentZoneMinutes, mapBalance, mapBlock, mapChain, type SourceRow } from './mapping.js';
import { sweepDeletes } from './deletes.js';
import { resyncInSnapshot } from './rewind.js';
import { sourceNow } from './source/cdc.js';
import {
  beginSnapshot, endSnapshot, sourceBalancesOf, sourceChainsAndBlocks, sourceMaxId, sourceRowsAbove, sourceRowsById, sourceRowsUpdated,
} from './source/reads.js';
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
  /** ids of balances / utxos the safety-net sweep reads per cycle */
  sweepIds: number;
  stopSignal: Promise<void>;
  once: boolean;
  /** see knownBalancesMax */
  knownBalances?: Map<string, string>;
  /** the early snapshots' time (read and applied, less the fixed part) per ms of source time they held,
   *  averaged: how long before its tick the next cycle's first one is taken (see firstLeadMs) */
  earlyRate?: number;
}

/** Missing ids remembered per table at most. */
const maxGaps = 100_000;

const shift = (wall: string, seconds: number) =>
  new Date(Date.parse(`${wall.replace(' ', 'T')}Z`) + seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
const wallSeconds = (wall: string) => Date.parse(`${wall.replace(' ', 'T')}Z`) / 1000;
const fromSeconds = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');

/** Addresses per balance look-up statement. */
const lookupChunk = 1_000;
/** Rows the sweep holds per cycle at most (its id range may hold more when many rows changed: the rest
 *  are read by the next cycles). */
const sweepRowLimit = 5_000;
/** Balances known to be in the read model as the source has them (source id → fingerprint), newest last:
 *  the sweep re-reads every row updated since the previous pass, nearly all of them applied by the
 *  derivation already; those it skips without a comparison. In memory only (per follow), bounded. */
const knownBalancesMax = 100_000;
const fingerprint = (r: SourceRow) => [r.chain, r.protocol, r.tick, r.address, r.balance, r.available, r.updated_at].map(text).join('\u0000');
function remember(knownBalances: Map<string, string>, rows: SourceRow[]) {
  for (const r of rows) {
    const id = String(r.id);
    knownBalances.delete(id);
    knownBalances.set(id, fingerprint(r));
  }
  for (const id of knownBalances.keys()) {
    if (knownBalances.size <= knownBalancesMax) break;
    knownBalances.delete(id);
  }
}

const text = (v: unknown) => (v === null || v === undefined ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v));

/** The balance keys new movement and transaction rows touch: (chain, protocol, tick) as the source spells
 *  them (protocol and tick have a binary collation there) → addresses. */
export function touchedBalanceKeys(rows: { table: string; row: SourceRow }[]): Map<string, { chain: string; protocol: string; tick: string; addresses: Set<string> }> {
  const out = new Map<string, { chain: string; protocol: string; tick: string; addresses: Set<string> }>();
  for (const { table, row } of rows) {
    const addresses = table === 'address_txs' ? [row.address, row.related_address] : table === 'txs' ? [row.from, row.to] : [];
    const chain = text(row.chain); const protocol = text(row.protocol); const tick = text(row.tick);
    if (!addresses.length || !chain || !tick) continue;
    const key = `${chain}\u0000${protocol}\u0000${tick}`;
    let k = out.get(key);
    if (!k) out.set(key, k = { chain, protocol, tick, addresses: new Set() });
    for (const a of addresses) if (text(a)) k.addresses.add(text(a));
  }
  return out;
}

/** The source's balance rows for those keys, by its unique key (address, chain, protocol, tick), in chunks. */
async function readTouchedBalances(conn: SourceConnection, keys: ReturnType<typeof touchedBalanceKeys>): Promise<SourceRow[]> {
  const out: SourceRow[] = [];
  for (const k of keys.values()) {
    const addresses = [...k.addresses];
    for (let i = 0; i < addresses.length; i += lookupChunk) {
      out.push(...await sourceBalancesOf(conn, k, addresses.slice(i, i + lookupChunk)));
    }
  }
  return out;
}

/**
 * Balance rows read from the source → changes: mapped, and (unless `written` says they are written without
 * a comparison) compared with the read model, only the changed ones kept; unmappable ones go on to be
 * reported by the apply. Returns the mappable rows (remembered once applied).
 */
async function pushBalances(c: PollingContext, balances: SourceRow[], changes: Change[], written: boolean): Promise<SourceRow[]> {
  if (!balances.length) return [];
  const mapped = balances.flatMap((row) => { try { return [{ ...mapBalance(row, c.apply.ctx), row }]; } catch { return []; } });
  const changed = written ? new Set(mapped.map((m) => m.row)) : new Set((await changedBalances(c.sql, mapped)).map((m) => m.row));
  const mappable = new Set(mapped.map((m) => m.row));
  for (const row of balances) if (changed.has(row) || !mappable.has(row)) changes.push({ table: 'balances', kind: 'update', row });
  return mapped.map((m) => m.row);
}

/** Applies `changes` and `also` in one transaction, table by table (as applyChanges groups them anyway), timed. */
async function applyTimed(c: PollingContext, changes: Change[], apply: ApplyOptions, applyMs: Record<string, number>,
  also: (tx: Tx) => Promise<void>): Promise<void> {
  await c.sql.begin(async (tx) => {
    for (let i = 0; i < changes.length;) {
      let j = i + 1;
      while (j < changes.length && changes[j]!.table === changes[i]!.table) j++;
      const t0 = performance.now();
      await applyChanges(tx as Tx, changes.slice(i, j), apply);
      applyMs[changes[i]!.table] = Math.round((applyMs[changes[i]!.table] ?? 0) + performance.now() - t0);
      i = j;
    }
    await also(tx as Tx);
  });
}

/**
 * One PostgreSQL transaction that applies changes while the source is still being read: `push` queues a
 * group (applied in the order pushed, each table's rows as one batch, timed), `commit` runs `also` after the
 * last group and commits, `abort` rolls back. The source's reads and PostgreSQL's writes overlap instead of
 * following each other.
 */
function pipelinedApply(c: PollingContext, apply: ApplyOptions, applyMs: Record<string, number>) {
  let queue: Promise<void> = Promise.resolve();
  let release!: (also: (tx: Tx) => Promise<void>) => void;
  let abort!: (error: unknown) => void;
  const finished = new Promise<(tx: Tx) => Promise<void>>((resolve, reject) => { release = resolve; abort = reject; });
  finished.catch(() => {});
  let opened!: (tx: Tx) => void;
  const txReady = new Promise<Tx>((resolve) => { opened = resolve; });
  const done = c.sql.begin(async (tx) => {
    opened(tx as Tx);
    const also = await finished;
    await queue;
    await also(tx as Tx);
  });
  done.catch(() => {});
  return {
    /** Resolves once every group pushed so far is applied (rejects if one failed). */
    settled: () => queue,
    push(group: Change[]) {
      if (!group.length) return;
      queue = queue.then(async () => {
        const tx = await txReady;
        for (let i = 0; i < group.length;) {
          let j = i + 1;
          while (j < group.length && group[j]!.table === group[i]!.table) j++;
          const t0 = performance.now();
          await applyChanges(tx, group.slice(i, j), apply);
          applyMs[group[i]!.table] = Math.round((applyMs[group[i]!.table] ?? 0) + performance.now() - t0);
          i = j;
        }
      });
      queue.catch(() => {}); // awaited by the transaction; a failure there rolls it back
    },
    async commit(also: (tx: Tx) => Promise<void>) {
      release(also);
      await done;
    },
    async abort(error: unknown) {
      abort(error);
      await done.catch(() => {});
    },
  };
}

/**
 * One cycle; returns whether a table had more new rows than one batch (poll again at once).
 *
 * With `schedule` (the follow's; not in --once runs) the cycle reads the source in up to three consistent
 * snapshots and applies them all in its one PostgreSQL transaction: the first, taken shortly before the
 * tick, carries the bulk of what the interval's flushes wrote; a second, when the first left time for it
 * before the tick, what committed while the first was read and applied; then the tick's snapshot reads only
 * what was committed since the last one (new ids above the watermarks, the gaps again, the balances those
 * rows touch, chain_info and block whole). The commit shows the tick's snapshot: the rows of the earlier
 * ones are all in it (insert-only tables; a balance read early is read again when a newer movement touches
 * it), so what becomes visible is still one consistent source state, and the time from the tick's snapshot
 * to that commit (the lag beyond the wait for the tick) is that of the last ~100 ms' rows instead of a whole
 * interval's. An early snapshot that needs more (a full batch, a rewind) is committed on its own, as a
 * one-snapshot cycle.
 */
async function pollOnce(c: PollingContext, conn: SourceConnection,
  schedule?: { previousTickAt: number; tickAt: number; sleep: (ms: number) => Promise<void> }): Promise<boolean> {
  const polls = await state.readPollState(c.sql);
  const knownBalances = (c.knownBalances ??= new Map());
  // a balance skipped as a bad row is not remembered: the sweep tries it again
  let badBalances = false;
  const apply: ApplyOptions = { ...c.apply, onBadRow: (e) => { if (e.table === 'balances') badBalances = true; c.apply.onBadRow(e); } };
  const changes: Change[] = [];
  // the id tables' watermarks and gaps, as the snapshots read so far leave them
  const marks = new Map(idTables.map((table) => [table, polls.get(table) ?? { source_table: table, high_id: '0', gaps: {}, window_from: null }]));
  let more = false;
  const rewinds = new Map<string, string | null>();
  // where a cycle's time goes (metrics, and a debug line per cycle)
  const phases: Record<string, number> = { source: 0, compare: 0, apply: 0 };
  let t = performance.now();
  const lap = (phase: string) => { const now = performance.now(); phases[phase]! += now - t; t = now; };
  let snapshotAt = performance.now();
  let visibleMs = 0;
  let firstMs: number | null = null;
  const earlyMs: number[] = [];
  let firstChanges = 0;
  const applyMs: Record<string, number> = {};
  let dbNow!: string;
  let byIdSize = 0;
  let mappedBalances: SourceRow[] = [];
  // ids of the balances derived from new movements (the sweep leaves them out)
  const derived = new Set<string>();
  // the read model's chains and heights, read while the source answers; kept up to date with what this
  // cycle writes (its transaction's view)
  const readModel = Promise.all([chainFingerprints(c.sql), indexedFingerprints(c.sql)]);
  readModel.catch(() => {}); // awaited below; a failed source read leaves it unawaited
  // the snapshots' changes are applied as they are read (one transaction, committed once all are read)
  const main = pipelinedApply(c, apply, applyMs);
  let pushed = 0;
  const pushNew = () => { main.push(changes.slice(pushed)); pushed = changes.length; };
  let committed = false;

  /** Reads one consistent snapshot of the source (left open) and queues its changes. */
  const readSnapshot = async () => {
    await beginSnapshot(conn);
    snapshotAt = performance.now();
    const from = changes.length;
    dbNow = await sourceNow(conn);
    // whole reads, written only where they differ (an unchanged write would still bump the data version)
    const [known, indexed] = await readModel;
    const { chains, blocks } = await sourceChainsAndBlocks(conn);
    for (const row of chains as SourceRow[]) {
      const m = mapChain(row);
      const fp = [m.chain_id, m.outer_chain, m.name, m.logo, m.network_id, m.ext].join('|');
      if (known.get(m.chain) !== fp) {
        changes.push({ table: 'chain_info', kind: 'insert', row });
        known.set(m.chain, fp);
      }
    }
    const present = new Set((blocks as SourceRow[]).map((b) => String(b.chain).toLowerCase()));
    for (const row of blocks as SourceRow[]) {
      const m = mapBlock(row, c.apply.ctx);
      const was = indexed.get(m.chain);
      const fp = `${m.block_number}|${Date.parse(m.block_time)}`;
      if (was !== fp) {
        changes.push({ table: 'block', kind: 'update', row });
        indexed.set(m.chain, fp);
      }
      // the height went down: a manual rewind
      if (was !== undefined && BigInt(was.split('|')[0]!) > BigInt(m.block_number)) rewinds.set(m.chain, m.block_number);
    }
    for (const chain of [...indexed.keys()]) {
      if (!present.has(chain)) {
        changes.push({ table: 'block', kind: 'delete', row: { chain } });
        indexed.delete(chain);
        rewinds.set(chain, null);
      }
    }
    pushNew();
    const now = Date.now();
    for (const table of idTables) {
      const s = marks.get(table)!;
      const high = BigInt(s.high_id.split('.')[0]!);
      const rows = await sourceRowsAbove(conn, table, String(high), c.batchSize);
      if (rows.length === c.batchSize) more = true;
      const gaps = { ...s.gaps };
      const gapIds = Object.keys(gaps);
      let late: SourceRow[] = [];
      if (gapIds.length) {
        late = await sourceRowsById(conn, table, gapIds);
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
      marks.set(table, { source_table: table, high_id: String(top), gaps, window_from: null });
      pushNew();
    }
    // balances: those this snapshot's new rows touch (late ones included)
    const fresh = changes.slice(from);
    const byId = new Map<string, SourceRow>();
    const touched = touchedBalanceKeys(fresh.filter((ch) => ch.table === 'address_txs' || ch.table === 'txs'));
    for (const row of await readTouchedBalances(conn, touched)) byId.set(String(row.id), row);
    for (const id of byId.keys()) derived.add(id);
    c.metrics.pollRows.inc({ read: 'derived' }, byId.size);
    lap('source');
    // a snapshot that writes new rows bumps the data version anyway: the balances its movements touch
    // (nearly all of them changed by those movements) are written without a comparison
    const bumps = fresh.some((ch) => (idTables as string[]).includes(ch.table));
    mappedBalances.push(...await pushBalances(c, [...byId.values()], changes, bumps));
    byIdSize += byId.size;
    pushNew();
    lap('compare');
  };

  try {
    if (schedule) {
      // the early snapshots, applied while the tick is awaited: a second one when the first left time for it,
      // as close to the tick as its predicted time allows (it holds only what committed since the first)
      const t0 = performance.now();
      let single = false;
      // since when the snapshot about to be read holds rows
      let since = schedule.previousTickAt;
      for (let early = 0; early < maxEarlySnapshots; early++) {
        const e0 = performance.now();
        const share = Math.max(1, Date.now() - since);
        since = Date.now();
        await readSnapshot();
        await main.settled();
        earlyMs.push(Math.round(performance.now() - e0));
        lap('apply');
        // committed as it is (one snapshot, which the sweep then reads too)
        if (more || rewinds.size) { single = true; break; }
        await endSnapshot(conn);
        // the next one holds what committed since this one's start: its time is a fixed part and those rows'
        // (at this one's ms per ms of source time); it starts as late as leaves it that time before the tick
        const took = performance.now() - e0;
        const rate = Math.max(0, took - earlyFixedMs) / share;
        // the pace is learnt from first snapshots (the second's is mostly its fixed part)
        if (early === 0) c.earlyRate = c.earlyRate === undefined ? rate : (c.earlyRate + rate) / 2;
        if (early + 1 >= maxEarlySnapshots) break;
        const latest = (schedule.tickAt - earlyFixedMs - earlyMarginMs + rate * since) / (1 + rate);
        if (latest < Date.now()) break;
        await schedule.sleep(latest - Date.now());
      }
      firstMs = Math.round(performance.now() - t0);
      firstChanges = changes.length;
      if (!single) {
        await schedule.sleep(schedule.tickAt - Date.now());
        t = performance.now();
        await readSnapshot();
      }
    } else await readSnapshot();
    // what the flushes wrote becomes visible here, in one transaction...
    committed = true;
    await main.commit(async (tx) => {
      // pipelined: one round trip
      await Promise.all([...[...marks.values()].map((s) => state.savePollState(tx, s)),
        state.savePosition(tx, { mode: 'polling', sourceTime: new Date(`${dbNow.replace(' ', 'T')}Z`) })]);
      // a rewind: the chain re-synced from the same snapshot, so the commit shows the source as it has it
      // (not its lowered height beside rows it deleted)
      for (const [chain, height] of rewinds) await resyncInSnapshot(tx, conn, chain, height, c.apply, c.log);
    });
    lap('apply');
    visibleMs = Math.round(performance.now() - snapshotAt);
    // ...then the safety-net sweep, in the same snapshot (what it finds is no newer than the rows just
    // written), in a second transaction: its reads (a range of the largest tables, slow when that range is not
    // in the source's buffer pool) no longer hold back the flushes' rows
    const sweepChanges: Change[] = [];
    const sweepNext: state.PollState[] = [];
    const swept = new Map<string, SourceRow>();
    for (const table of windowTables) {
      const s = polls.get(table);
      let cursor = BigInt(s?.high_id.split('.')[0] ?? '0');
      let windowFrom = s?.window_from ?? shift(dbNow, -c.overlapS);
      // the next pass reads from the start of this one (minus the overlap): a row updated while this pass
      // was past its id is read by the next
      let nextFrom = typeof s?.gaps.next_from === 'number' ? fromSeconds(s.gaps.next_from) : null;
      if (cursor === 0n || nextFrom === null) nextFrom = shift(dbNow, -c.overlapS);
      const hi = cursor + BigInt(c.sweepIds);
      // updates are stamped by the database's clock, inserts by the indexer host's (its zone's wall-clock
      // time): the window is read on both clocks; the id range bounds the scan and the rows held
      const zone = currentZoneMinutes(c.apply.ctx) * 60;
      const rows = await sourceRowsUpdated(conn, table, cursor, hi,
        [[windowFrom, shift(dbNow, 1)], [shift(windowFrom, zone), shift(dbNow, 1 + zone)]], sweepRowLimit);
      c.metrics.pollRows.inc({ read: 'sweep' }, rows.length);
      const top = await sourceMaxId(conn, table);
      if (rows.length === sweepRowLimit) cursor = BigInt(String(rows[rows.length - 1]!.id));
      else if (hi >= top) {
        cursor = 0n;
        windowFrom = nextFrom;
      } else cursor = hi;
      if (table === 'balances') {
        for (const row of rows) if (!derived.has(String(row.id)) && knownBalances.get(String(row.id)) !== fingerprint(row)) swept.set(String(row.id), row);
      }
      else for (const row of rows) sweepChanges.push({ table, kind: 'update', row });
      sweepNext.push({ source_table: table, high_id: String(cursor), gaps: cursor === 0n ? {} : { next_from: wallSeconds(nextFrom) }, window_from: windowFrom });
    }
    lap('source');
    // the sweep's balances are compared: unchanged ones are not written (that would bump the data version)
    mappedBalances.push(...await pushBalances(c, [...swept.values()], sweepChanges, false));
    byIdSize += swept.size;
    lap('compare');
    await applyTimed(c, sweepChanges, apply, applyMs, async (tx) => { await Promise.all(sweepNext.map((s) => state.savePollState(tx, s))); });
    lap('apply');
  } catch (error) {
    if (!committed) await main.abort(error);
    throw error;
  } finally {
    await endSnapshot(conn);
  }
  // the balances now match the source's rows (written, or compared equal)
  if (!badBalances) remember(knownBalances, mappedBalances);
  for (const [phase, ms] of Object.entries(phases)) c.metrics.pollSeconds.inc({ phase }, ms / 1000);
  c.log.debug({ ms: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, Math.round(v)])), visibleMs, firstMs, earlyMs, firstChanges, applyMs, changes: changes.length,
    balancesRead: byIdSize, rssMB: Math.round(process.memoryUsage().rss / 2 ** 20) }, 'poll');
  if (rewinds.size) knownBalances.clear();
  c.metrics.transactions.inc();
  c.metrics.lastApplied.set(Date.now() / 1000);
  return more;
}

/**
 * How long before its tick a cycle's first snapshot is taken: time for two early snapshots, and a margin (a
 * quarter of their time and 30 ms: their pace varies from one cycle to the next). At r ms of work per ms of
 * source time (`earlyRate`), fixed part f, interval P and lead L, the first takes d1 = f + r(P - L), the
 * second (what committed during the first) d2 = f + r d1; L = 1.25 (d1 + d2) + 30 solves to the expression
 * below. At most 80% of the interval.
 */
export function firstLeadMs(c: Pick<PollingContext, 'intervalMs' | 'earlyRate'>): number {
  const r = Math.min(0.9, Math.max(0.02, c.earlyRate ?? 0.3));
  const f = earlyFixedMs;
  const lead = (firstLeadSlack * ((f + r * c.intervalMs) * (1 + r) + f) + firstLeadMarginMs) / (1 + firstLeadSlack * r * (1 + r));
  return Math.round(Math.max(firstLeadMinMs, Math.min(0.8 * c.intervalMs, lead)));
}
const firstLeadSlack = 1.25;
const firstLeadMarginMs = 30;
const firstLeadMinMs = 20;
/** snapshots a cycle reads before its tick's, at most */
const maxEarlySnapshots = 2;
/** an early snapshot's time besides its rows' (round trips), and the time left before the tick it needs */
const earlyFixedMs = 20;
const earlyMarginMs = 20;

export async function followPolling(c: PollingContext): Promise<void> {
  c.metrics.setMode('polling');
  let stopped = false;
  let wake: (() => void) | null = null;
  void c.stopSignal.then(() => { stopped = true; wake?.(); });
  const conn = await connectSource(c.target);
  c.log.info({ intervalMs: c.intervalMs, overlapS: c.overlapS }, 'polling follow starts');
  let lastSweep = Date.now();
  const sleep = (ms: number) => new Promise<void>((resolve) => {
    if (stopped || ms <= 0) { resolve(); return; }
    wake = resolve;
    setTimeout(resolve, ms);
  });
  // fixed rate: a cycle's (last) snapshot is taken at its tick, `intervalMs` after the previous tick, however
  // long that cycle took (one that overran the next tick moves the schedule: that tick is then at once); its
  // first snapshot is read and applied just before the tick (see pollOnce)
  let tick = Date.now();
  let previous = tick - c.intervalMs;
  try {
    while (!stopped) {
      const early = !c.once && tick - Date.now() > 0;
      const more = await pollOnce(c, conn, early ? { previousTickAt: previous, tickAt: tick, sleep } : undefined);
      previous = tick;
      if (Date.now() - lastSweep >= c.reconcileIntervalS * 1000) {
        await sweepDeletes(c.sql, conn, c.log);
        lastSweep = Date.now();
      }
      c.metrics.lagSeconds.set(more ? c.intervalMs / 1000 : 0);
      if (more) { tick = Date.now(); previous = tick; continue; }
      if (c.once) return;
      tick = Math.max(tick + c.intervalMs, Date.now());
      await sleep(tick - firstLeadMs(c) - Date.now());
    }
  } finally {
    await conn.end().catch(() => {});
  }
}

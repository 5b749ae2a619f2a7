// Follow by polling, for sources whose binlog is off or not readable: each cycle reads one consistent
// snapshot of the source and applies what changed, with the watermarks, as one PostgreSQL transaction.
// What each table is read by (id watermark and gaps, derived balances, the sweep) is in docs/sync.md.
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
import type { Logger } from '../observability/logger.js';
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

type Schedule = { previousTickAt: number; tickAt: number; sleep: (ms: number) => Promise<void> };

/** What a cycle saw: a table with more new rows than one batch (poll again at once), and whether its
 *  snapshots held anything new (new rows, a block or chain row that changed). */
type CycleResult = { more: boolean; found: boolean };

/** One cycle. */
async function pollOnce(c: PollingContext, conn: SourceConnection, schedule?: Schedule): Promise<CycleResult> {
  return new PollCycle(c, conn, await state.readPollState(c.sql)).run(schedule);
}

/**
 * One poll cycle. With a schedule (the follow's; not in --once runs) it reads the source in up to three
 * consistent snapshots and applies them all in its one PostgreSQL transaction: the first, taken shortly
 * before the tick, carries the bulk of the interval's flushes; a second, when the first left time for it,
 * what committed while the first was read; then the tick's snapshot reads only what committed since. The
 * commit shows the tick's snapshot (the earlier ones' rows are all in it: insert-only tables, and a balance
 * read early is read again when a newer movement touches it). An early snapshot that needs more (a full
 * batch, a rewind) is committed on its own.
 */
class PollCycle {
  private readonly knownBalances: Map<string, string>;
  /** a balance skipped as a bad row is not remembered: the sweep tries it again */
  private badBalances = false;
  private readonly apply: ApplyOptions;
  private readonly changes: Change[] = [];
  /** the id tables' watermarks and gaps, as the snapshots read so far leave them */
  private readonly marks: Map<string, state.PollState>;
  private more = false;
  /** a snapshot of this cycle held something new (the sweep's finds aside) */
  private found = false;
  private readonly rewinds = new Map<string, string | null>();
  /** where a cycle's time goes (metrics, and a debug line per cycle) */
  private readonly phases: Record<string, number> = { source: 0, compare: 0, apply: 0 };
  private t = performance.now();
  private snapshotAt = performance.now();
  private readonly timing = { visibleMs: 0, firstMs: null as number | null, earlyMs: [] as number[], firstChanges: 0, applyMs: {} as Record<string, number> };
  private dbNow = '';
  private balancesRead = 0;
  private readonly mappedBalances: SourceRow[] = [];
  /** ids of the balances derived from new movements (the sweep leaves them out) */
  private readonly derived = new Set<string>();
  /** the read model's chains and heights, read while the source answers; kept up to date with what this cycle writes */
  private readonly readModel: Promise<[Map<string, string>, Map<string, string>]>;
  /** the snapshots' changes, applied as they are read (one transaction, committed once all are read) */
  private readonly main: ReturnType<typeof pipelinedApply>;
  private pushed = 0;

  constructor(private readonly c: PollingContext, private readonly conn: SourceConnection, private readonly polls: Map<string, state.PollState>) {
    this.knownBalances = (c.knownBalances ??= new Map());
    this.apply = { ...c.apply, onBadRow: (e) => { if (e.table === 'balances') this.badBalances = true; c.apply.onBadRow(e); } };
    this.marks = new Map(idTables.map((table) => [table, polls.get(table) ?? { source_table: table, high_id: '0', gaps: {}, window_from: null }]));
    this.readModel = Promise.all([chainFingerprints(c.sql), indexedFingerprints(c.sql)]);
    this.readModel.catch(() => {}); // awaited by the first snapshot; a failed source read leaves it unawaited
    this.main = pipelinedApply(c, this.apply, this.timing.applyMs);
  }

  private lap(phase: string) { const now = performance.now(); this.phases[phase]! += now - this.t; this.t = now; }
  private pushNew() { this.main.push(this.changes.slice(this.pushed)); this.pushed = this.changes.length; }

  async run(schedule?: Schedule): Promise<CycleResult> {
    let committed = false;
    try {
      if (!schedule || !(await this.readEarly(schedule))) {
        if (schedule) {
          await schedule.sleep(schedule.tickAt - Date.now());
          this.t = performance.now();
        }
        await this.readSnapshot();
      }
      committed = true;
      await this.commitMain();
      await this.sweep();
    } catch (error) {
      if (!committed) await this.main.abort(error);
      throw error;
    } finally {
      await endSnapshot(this.conn);
    }
    this.report();
    return { more: this.more, found: this.found };
  }

  /** Reads one consistent snapshot of the source (left open) and queues its changes. */
  private async readSnapshot(): Promise<void> {
    await beginSnapshot(this.conn);
    this.snapshotAt = performance.now();
    const from = this.changes.length;
    this.dbNow = await sourceNow(this.conn);
    await this.readChainsAndBlocks();
    this.pushNew();
    const now = Date.now();
    for (const table of idTables) {
      await this.readIdTable(table, now);
      this.pushNew();
    }
    await this.readDerivedBalances(this.changes.slice(from));
    if (this.changes.length > from) this.found = true;
  }

  /** chain_info and block, whole; written only where they differ (an unchanged write would still bump the data version). */
  private async readChainsAndBlocks(): Promise<void> {
    const [known, indexed] = await this.readModel;
    const { chains, blocks } = await sourceChainsAndBlocks(this.conn);
    for (const row of chains) {
      const m = mapChain(row);
      const fp = [m.chain_id, m.outer_chain, m.name, m.logo, m.network_id, m.ext].join('|');
      if (known.get(m.chain) !== fp) {
        this.changes.push({ table: 'chain_info', kind: 'insert', row });
        known.set(m.chain, fp);
      }
    }
    const present = new Set(blocks.map((b) => String(b.chain).toLowerCase()));
    for (const row of blocks) {
      const m = mapBlock(row, this.c.apply.ctx);
      const was = indexed.get(m.chain);
      const fp = `${m.block_number}|${Date.parse(m.block_time)}`;
      if (was !== fp) {
        this.changes.push({ table: 'block', kind: 'update', row });
        indexed.set(m.chain, fp);
      }
      // the height went down: a manual rewind
      if (was !== undefined && BigInt(was.split('|')[0]!) > BigInt(m.block_number)) this.rewinds.set(m.chain, m.block_number);
    }
    for (const chain of [...indexed.keys()]) {
      if (present.has(chain)) continue;
      this.changes.push({ table: 'block', kind: 'delete', row: { chain } });
      indexed.delete(chain);
      this.rewinds.set(chain, null);
    }
  }

  /** An insert-only table's rows above its watermark, and those of its gaps that committed since. */
  private async readIdTable(table: string, now: number): Promise<void> {
    const { c, conn } = this;
    const s = this.marks.get(table)!;
    const high = BigInt(s.high_id.split('.')[0]!);
    const rows = await sourceRowsAbove(conn, table, String(high), c.batchSize);
    if (rows.length === c.batchSize) this.more = true;
    const gaps = { ...s.gaps };
    const gapIds = Object.keys(gaps);
    const late = gapIds.length ? await sourceRowsById(conn, table, gapIds) : [];
    for (const r of late) delete gaps[String(r.id)];
    if (late.length) c.log.info({ table, ids: late.map((r) => String(r.id)) }, 'rows committed late below the watermark');
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
    for (const row of [...late, ...rows]) this.changes.push({ table, kind: 'insert', row });
    this.marks.set(table, { source_table: table, high_id: String(top), gaps, window_from: null });
  }

  /** The balances a snapshot's new rows (`fresh`, late ones included) touch. */
  private async readDerivedBalances(fresh: Change[]): Promise<void> {
    const byId = new Map<string, SourceRow>();
    const touched = touchedBalanceKeys(fresh.filter((ch) => ch.table === 'address_txs' || ch.table === 'txs'));
    for (const row of await readTouchedBalances(this.conn, touched)) byId.set(String(row.id), row);
    for (const id of byId.keys()) this.derived.add(id);
    this.c.metrics.pollRows.inc({ read: 'derived' }, byId.size);
    this.lap('source');
    // a snapshot that writes new rows bumps the data version anyway: the balances its movements touch
    // (nearly all of them changed by those movements) are written without a comparison
    const bumps = fresh.some((ch) => (idTables as string[]).includes(ch.table));
    this.mappedBalances.push(...await pushBalances(this.c, [...byId.values()], this.changes, bumps));
    this.balancesRead += byId.size;
    this.pushNew();
    this.lap('compare');
  }

  /**
   * The early snapshots, applied while the tick is awaited: a second one when the first left time for it,
   * as close to the tick as its predicted time allows. Returns true when one of them is committed as it is
   * (a full batch, a rewind: the tick's snapshot is then not read).
   */
  private async readEarly(schedule: Schedule): Promise<boolean> {
    const t0 = performance.now();
    let single = false;
    // since when the snapshot about to be read holds rows
    let since = schedule.previousTickAt;
    for (let early = 0; early < maxEarlySnapshots; early++) {
      const e0 = performance.now();
      const share = Math.max(1, Date.now() - since);
      since = Date.now();
      await this.readSnapshot();
      await this.main.settled();
      this.timing.earlyMs.push(Math.round(performance.now() - e0));
      this.lap('apply');
      if (this.more || this.rewinds.size) { single = true; break; }
      await endSnapshot(this.conn);
      // nothing committed since the previous tick: the tick's snapshot alone reads what comes next
      if (!this.found) break;
      // the next one holds what committed since this one's start: its time is a fixed part and those rows'
      // (at this one's ms per ms of source time); it starts as late as leaves it that time before the tick
      const rate = Math.max(0, performance.now() - e0 - earlyFixedMs) / share;
      // the pace is learnt from first snapshots (the second's is mostly its fixed part)
      if (early === 0) this.c.earlyRate = this.c.earlyRate === undefined ? rate : (this.c.earlyRate + rate) / 2;
      if (early + 1 >= maxEarlySnapshots) break;
      const latest = (schedule.tickAt - earlyFixedMs - earlyMarginMs + rate * since) / (1 + rate);
      if (latest < Date.now()) break;
      await schedule.sleep(latest - Date.now());
    }
    this.timing.firstMs = Math.round(performance.now() - t0);
    this.timing.firstChanges = this.changes.length;
    return single;
  }

  /** What the flushes wrote becomes visible here, in one transaction with the watermarks. */
  private async commitMain(): Promise<void> {
    const { c, conn } = this;
    await this.main.commit(async (tx) => {
      // pipelined: one round trip
      await Promise.all([...[...this.marks.values()].map((s) => state.savePollState(tx, s)),
        state.savePosition(tx, { mode: 'polling', sourceTime: new Date(`${this.dbNow.replace(' ', 'T')}Z`) })]);
      // a rewind: the chain re-synced from the same snapshot, so the commit shows the source as it has it
      // (not its lowered height beside rows it deleted)
      for (const [chain, height] of this.rewinds) await resyncInSnapshot(tx, conn, chain, height, c.apply, c.log);
    });
    this.lap('apply');
    this.timing.visibleMs = Math.round(performance.now() - this.snapshotAt);
  }

  /**
   * The safety-net sweep, in the same snapshot (what it finds is no newer than the rows just written), in a
   * second transaction: its reads of the largest tables do not hold back the flushes' rows.
   */
  private async sweep(): Promise<void> {
    const sweepChanges: Change[] = [];
    const sweepNext: state.PollState[] = [];
    const swept = new Map<string, SourceRow>();
    for (const table of windowTables) {
      const { rows, next } = await this.sweepTable(table);
      if (table === 'balances') {
        for (const row of rows) {
          const id = String(row.id);
          if (!this.derived.has(id) && this.knownBalances.get(id) !== fingerprint(row)) swept.set(id, row);
        }
      } else for (const row of rows) sweepChanges.push({ table, kind: 'update', row });
      sweepNext.push(next);
    }
    this.lap('source');
    // the sweep's balances are compared: unchanged ones are not written (that would bump the data version)
    this.mappedBalances.push(...await pushBalances(this.c, [...swept.values()], sweepChanges, false));
    this.balancesRead += swept.size;
    this.lap('compare');
    await applyTimed(this.c, sweepChanges, this.apply, this.timing.applyMs, async (tx) => {
      await Promise.all(sweepNext.map((s) => state.savePollState(tx, s)));
    });
    this.lap('apply');
  }

  /** One window table's next id range: the rows stamped inside the sweep's window, and where the next cycle goes on. */
  private async sweepTable(table: string): Promise<{ rows: SourceRow[]; next: state.PollState }> {
    const { c, dbNow } = this;
    const s = this.polls.get(table);
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
    const rows = await sourceRowsUpdated(this.conn, table, cursor, hi,
      [[windowFrom, shift(dbNow, 1)], [shift(windowFrom, zone), shift(dbNow, 1 + zone)]], sweepRowLimit);
    c.metrics.pollRows.inc({ read: 'sweep' }, rows.length);
    if (rows.length === sweepRowLimit) cursor = BigInt(String(rows[rows.length - 1]!.id));
    else if (hi >= await sourceMaxId(this.conn, table)) {
      cursor = 0n;
      windowFrom = nextFrom;
    } else cursor = hi;
    return { rows, next: { source_table: table, high_id: String(cursor), gaps: cursor === 0n ? {} : { next_from: wallSeconds(nextFrom) }, window_from: windowFrom } };
  }

  /** After the cycle: the balances it leaves matching the source remembered, metrics and the debug line. */
  private report(): void {
    const { c } = this;
    if (!this.badBalances) remember(this.knownBalances, this.mappedBalances);
    for (const [phase, ms] of Object.entries(this.phases)) c.metrics.pollSeconds.inc({ phase }, ms / 1000);
    c.log.debug({ ms: Object.fromEntries(Object.entries(this.phases).map(([k, v]) => [k, Math.round(v)])), ...this.timing,
      changes: this.changes.length, balancesRead: this.balancesRead, rssMB: Math.round(process.memoryUsage().rss / 2 ** 20) }, 'poll');
    if (this.rewinds.size) this.knownBalances.clear();
    c.metrics.transactions.inc();
    c.metrics.lastApplied.set(Date.now() / 1000);
  }
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
  // first snapshot is read and applied just before the tick (see pollOnce), unless the previous cycle found
  // nothing new: an idle source is then read once per interval, at the tick
  let tick = Date.now();
  let previous = tick - c.intervalMs;
  let idle = false;
  try {
    while (!stopped) {
      const early = !c.once && !idle && tick - Date.now() > 0;
      const { more, found } = await pollOnce(c, conn, early ? { previousTickAt: previous, tickAt: tick, sleep } : undefined);
      idle = !found;
      previous = tick;
      if (Date.now() - lastSweep >= c.reconcileIntervalS * 1000) {
        await sweepDeletes(c.sql, conn, c.log);
        lastSweep = Date.now();
      }
      c.metrics.lagSeconds.set(more ? c.intervalMs / 1000 : 0);
      if (more) { tick = Date.now(); previous = tick; continue; }
      if (c.once) return;
      tick = Math.max(tick + c.intervalMs, Date.now());
      await sleep(tick - (idle ? 0 : firstLeadMs(c)) - Date.now());
    }
  } finally {
    await conn.end().catch(() => {});
  }
}

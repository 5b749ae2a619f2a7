// Follow the source's ROW binlog (zongji on mysql2) from the saved position. Row events are collected
// per source transaction; at its commit (XID) the changes are applied as ONE PostgreSQL transaction that
// also stores the position after that XID — a crash at any point neither loses nor repeats a change.
import ZongJi, { type BinlogEvent } from '@vlasky/zongji';
import type { Sql } from '../db/client.js';
import type { Tx } from '../db/writes.js';
import * as state from './target/state.js';
import { applyChanges, ignoredTables, syncedTables, type ApplyOptions, type Change } from './apply.js';
import { noteRewinds, resyncInSnapshot, rewoundChains } from './rewind.js';
import { atOrAfter, currentPosition, startSnapshotAt, type BinlogPosition } from './source/cdc.js';
import { connectionOptions, connectSource, type SourceTarget } from './source/connection.js';
import { endSnapshot } from './source/reads.js';
import type { Logger } from '../observability/logger.js';
import type { SyncMetrics } from './metrics.js';

export interface BinlogContext {
  sql: Sql;
  target: SourceTarget;
  serverId: number;
  apply: ApplyOptions;
  log: Logger;
  metrics: SyncMetrics;
  /** resolves when the follow should stop (SIGTERM, or --once once caught up) */
  stopSignal: Promise<void>;
  /** --once: stop when the stream has nothing more to deliver */
  once: boolean;
}

/** Source transactions held in memory before the stream is paused, and the level it resumes at. */
const highWater = 200;
const lowWater = 20;
/** Rows applied in one PostgreSQL transaction at most when several source transactions wait (see merge). */
const mergeRows = 20_000;
/** A rewound chain is re-synced once the stream is quiet, or after this long. */
const rewindDelayMs = 2_000;
/** How long a re-sync waits for the stream to deliver the transactions its snapshot holds. */
const snapshotCatchUpMs = 60_000;

interface SourceTransaction { changes: Change[]; file: string; pos: number; gtid: string | null; time: number }

/**
 * The source transactions waiting, taken from the queue as one: while the follow is behind (the queue
 * holds more than one), consecutive source transactions are applied as one PostgreSQL transaction (up to
 * `mergeRows` rows) that stores the position after the last — still all or nothing, a reader sees whole
 * flushes, and the transaction's fixed costs are paid once for them all. Without deletes, the changes are
 * grouped by table in dependency order (each table's rows keep their order); with deletes, they stay in order.
 */
function merge(queue: SourceTransaction[]): SourceTransaction | null {
  const first = queue.shift();
  if (!first) return null;
  let count = 1;
  let changes = first.changes;
  let last = first;
  while (queue.length && changes.length + queue[0]!.changes.length <= mergeRows) {
    last = queue.shift()!;
    changes = changes.concat(last.changes);
    count++;
  }
  if (count > 1 && !changes.some((ch) => ch.kind === 'delete')) {
    const order = new Map((syncedTables as readonly string[]).map((t, i) => [t, i]));
    changes = changes.map((ch, i) => ({ ch, i }))
      .sort((a, b) => (order.get(a.ch.table) ?? 99) - (order.get(b.ch.table) ?? 99) || a.i - b.i).map((x) => x.ch);
  }
  return { ...last, changes, time: first.time };
}

type RowsEvent = BinlogEvent & { rows: Record<string, unknown>[] | { before: Record<string, unknown>; after: Record<string, unknown> }[];
  tableId: number; tableMap: Record<number, { tableName: string; parentSchema: string }> };

/** The changes of one rows event of a synced table (none for other tables). */
function rowChanges(type: string, e: RowsEvent): Change[] {
  const table = e.tableMap[e.tableId]?.tableName ?? '';
  if (ignoredTables.has(table) || !(syncedTables as readonly string[]).includes(table)) return [];
  return e.rows.map((r): Change => {
    if (type !== 'updaterows') return { table, kind: type === 'writerows' ? 'insert' : 'delete', row: r as Record<string, unknown> };
    const u = r as { before: Record<string, unknown>; after: Record<string, unknown> };
    return { table, kind: 'update', row: u.after, before: u.before };
  });
}

/** The binlog stream: source transactions queued in order, with backpressure, the stream's end, failures. */
class BinlogStream {
  readonly queue: SourceTransaction[] = [];
  failure: Error | null = null;
  stopped = false;
  lastEventAt = Date.now();
  /** the position after the last event received */
  at: { file: string; pos: number };
  private pending: Change[] = [];
  private wake: (() => void) | null = null;
  private paused = false;
  private readonly zongji: ZongJi;
  readonly ready: Promise<void>;

  constructor(private readonly c: BinlogContext, from: { file: string; pos: number }) {
    this.at = from;
    this.zongji = new ZongJi(connectionOptions(c.target) as never);
    this.zongji.on('binlog', (event: BinlogEvent) => this.onEvent(event));
    this.zongji.on('error', (error: Error) => { this.failure = error; this.notify(); });
    this.ready = new Promise<void>((resolve, reject) => {
      const t = setInterval(() => { if (this.failure) { clearInterval(t); reject(this.failure); } }, 50);
      this.zongji.on('ready', () => { clearInterval(t); resolve(); });
    });
    this.zongji.start({
      serverId: c.serverId, filename: from.file, position: from.pos,
      includeEvents: ['rotate', 'tablemap', 'writerows', 'updaterows', 'deleterows', 'xid', 'query'],
      includeSchema: { [c.target.database]: true },
    } as never);
    void c.stopSignal.then(() => { this.stopped = true; this.notify(); });
  }

  private onEvent(event: BinlogEvent): void {
    this.lastEventAt = Date.now();
    const type = event.getEventName();
    const file = (this.zongji as unknown as { options: { filename: string } }).options.filename;
    if (type !== 'rotate' && event.nextPosition) this.at = { file, pos: event.nextPosition };
    if (type === 'writerows' || type === 'updaterows' || type === 'deleterows') this.pending.push(...rowChanges(type, event as RowsEvent));
    else if (type === 'xid' || (type === 'query' && /^\s*COMMIT/i.test((event as unknown as { query: string }).query))) {
      this.queue.push({ changes: this.pending, file, pos: event.nextPosition, gtid: event.gtid ?? null, time: event.timestamp });
      this.pending = [];
      this.c.metrics.lagEvents.set(this.queue.length);
      // bounded memory: stop reading the stream while PostgreSQL is behind (a backlog after an outage)
      if (this.queue.length >= highWater && !this.paused) {
        this.paused = true;
        this.connection()?.pause();
        this.c.log.info({ queued: this.queue.length }, 'binlog stream paused until the backlog is applied');
      }
      this.notify();
    }
  }

  private connection() { return (this.zongji as unknown as { connection?: { pause(): void; resume(): void } }).connection; }
  private notify() { const w = this.wake; this.wake = null; w?.(); }

  /** Throws the stream's failure, if any. */
  check(): void { if (this.failure) throw this.failure; }

  /** Takes the queued transactions as one (see merge), resuming a paused stream once the backlog is low. */
  take(): SourceTransaction | null { return this.resumed(merge(this.queue)); }
  /** Takes one queued transaction. */
  takeOne(): SourceTransaction | null { return this.resumed(this.queue.shift() ?? null); }
  private resumed<T>(value: T): T {
    this.c.metrics.lagEvents.set(this.queue.length);
    if (this.paused && this.queue.length <= lowWater) {
      this.paused = false;
      this.connection()?.resume();
    }
    return value;
  }

  /** Waits for the next transaction, a failure or the stop (at most `ms`). */
  waitForMore(ms: number): Promise<void> {
    return new Promise<void>((resolve) => { this.wake = resolve; setTimeout(resolve, ms); });
  }

  stop(): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 2_000);
      this.zongji.on('stopped', () => { clearTimeout(t); resolve(); });
      this.zongji.stop();
    });
  }
}

/** Follows until stopped; throws on a source or target error (the caller retries from the saved position). */
export async function followBinlog(c: BinlogContext): Promise<void> {
  const saved = await state.readSourceState(c.sql);
  if (!saved?.binlog_file || saved.binlog_pos == null) throw new Error('no saved binlog position (backfill not in binlog mode)');
  c.metrics.setMode('binlog');
  // --once: caught up once the position the binlog had at the start is applied
  let end: BinlogPosition | null = null;
  if (c.once) {
    const conn = await connectSource(c.target);
    try { end = await currentPosition(conn); } finally { await conn.end().catch(() => {}); }
  }
  const follow = new BinlogFollow(c, new BinlogStream(c, { file: saved.binlog_file, pos: Number(saved.binlog_pos) }));
  c.log.info({ file: saved.binlog_file, pos: saved.binlog_pos }, 'binlog follow starts');
  try {
    await follow.stream.ready;
    await follow.run(end);
  } finally {
    await follow.stream.stop();
  }
}

/** SIGTERM during a re-sync (its transaction is rolled back). */
class Stopped extends Error {}

/** The apply loop: whole source transactions in order, and the re-sync of rewound chains. */
class BinlogFollow {
  private applied: { file: string; pos: number };
  private lastSavedAt = 0;
  private readonly rewound = new Map<string, string | null>();
  private rewoundSince = 0;

  constructor(private readonly c: BinlogContext, readonly stream: BinlogStream) {
    this.applied = { ...stream.at };
  }

  async run(end: BinlogPosition | null): Promise<void> {
    const s = this.stream;
    for (;;) {
      s.check();
      if (s.stopped) return; // SIGTERM: the transaction in hand was committed, the rest is read again next time
      // a rewind seen (a lowered height, deletes): the chain is re-synced once the stream is quiet, or after a while
      if (this.rewound.size && (!s.queue.length || Date.now() - this.rewoundSince > rewindDelayMs)) await this.resync();
      const txn = s.take();
      if (!txn) {
        this.c.metrics.lagSeconds.set(0);
        // --once: caught up at the start position (or when the stream has been quiet for a while)
        if (this.c.once && ((end && atOrAfter(this.applied, end)) || Date.now() - s.lastEventAt > 5_000)) return;
        await s.waitForMore(200);
        continue;
      }
      this.c.metrics.lagSeconds.set(Math.max(0, (Date.now() - txn.time) / 1000));
      // foreign transactions (other schemas, ignored tables) only move the position, at most every 5 s
      if (txn.changes.length === 0 && Date.now() - this.lastSavedAt < 5_000 && s.queue.length > 0) continue;
      await this.c.sql.begin(async (tx) => {
        await applyChanges(tx as Tx, txn.changes, this.c.apply);
        await state.savePosition(tx, { mode: 'binlog', file: txn.file, pos: txn.pos, gtid: txn.gtid, sourceTime: new Date(txn.time) });
      });
      this.done(txn);
    }
  }

  /** After a transaction is committed: the position, metrics, and the rewinds it holds. */
  private done(txn: SourceTransaction): void {
    this.lastSavedAt = Date.now();
    this.applied = { file: txn.file, pos: txn.pos };
    const found = rewoundChains(txn.changes);
    if (found.size && !this.rewound.size) this.rewoundSince = Date.now();
    noteRewinds(this.rewound, found);
    if (txn.changes.length) this.c.metrics.transactions.inc();
    this.c.metrics.setPosition(txn.file, txn.pos);
    this.c.metrics.lastApplied.set(Date.now() / 1000);
  }

  /**
   * Re-syncs the rewound chains from one source snapshot, in one read-model transaction that first applies
   * the stream's transactions the snapshot already holds: the commit shows the source exactly at the
   * snapshot, and the follow goes on with the transactions after it (none is applied twice).
   */
  private async resync(): Promise<void> {
    const conn = await connectSource(this.c.target);
    try {
      const snapshot = await startSnapshotAt(conn);
      let last: SourceTransaction | null = null;
      await this.c.sql.begin(async (sqlTx) => {
        const tx = sqlTx as Tx;
        for (let txn = await this.nextWithin(snapshot); txn; txn = await this.nextWithin(snapshot)) {
          await applyChanges(tx, txn.changes, this.c.apply);
          noteRewinds(this.rewound, rewoundChains(txn.changes));
          last = txn;
        }
        for (const [chain, height] of this.rewound) await resyncInSnapshot(tx, conn, chain, height, this.c.apply, this.c.log);
        const l = last as SourceTransaction | null;
        if (l) await state.savePosition(tx, { mode: 'binlog', file: l.file, pos: l.pos, gtid: l.gtid, sourceTime: new Date(l.time) });
      });
      this.rewound.clear();
      if (last) this.done(last);
    } catch (error) {
      if (!(error instanceof Stopped)) throw error; // SIGTERM: rolled back; the follow stops
    } finally {
      await endSnapshot(conn).catch(() => {});
      await conn.end().catch(() => {});
    }
  }

  /** The next queued source transaction the snapshot holds (waiting for the stream to deliver it); null
   *  once the stream has reached the snapshot's position. */
  private async nextWithin(snapshot: BinlogPosition | null): Promise<SourceTransaction | null> {
    const s = this.stream;
    const deadline = Date.now() + snapshotCatchUpMs;
    for (;;) {
      s.check();
      if (s.stopped) throw new Stopped();
      if (!snapshot) return null;
      const next = s.queue[0];
      if (next) return atOrAfter(snapshot, next) ? s.takeOne() : null;
      if (atOrAfter(s.at, snapshot) || atOrAfter(this.applied, snapshot)) return null;
      if (Date.now() > deadline) throw new Error(`the binlog stream never reached the re-sync's snapshot (${snapshot.file}:${snapshot.pos})`);
      await s.waitForMore(50);
    }
  }
}

// Follow the source's ROW binlog (zongji on mysql2) from the saved position. Row events are collected
// per source transaction; at its commit (XID) the changes are applied as ONE PostgreSQL transaction that
// also stores the position after that XID — a crash at any point neither loses nor repeats a change.
import ZongJi, { type BinlogEvent } from '@vlasky/zongji';
import type { Sql } from '../db/client.js';
import type { Tx } from '../db/sync-apply.js';
import * as state from '../db/sync-state.js';
import { applyChanges, ignoredTables, syncedTables, type ApplyOptions, type Change } from './apply.js';
import { resyncChain, rewoundChains } from './rewind.js';
import { currentPosition, type BinlogPosition } from './source/cdc.js';
import { connectionOptions, connectSource, type SourceTarget } from './source/connection.js';
import type { Logger } from './log.js';
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

/**
 * The source transactions waiting, taken from the queue as one: while the follow is behind (the queue
 * holds more than one), consecutive source transactions are applied as one PostgreSQL transaction (up to
 * `mergeRows` rows) that stores the position after the last — still all or nothing, a reader sees whole
 * flushes, and the statements and the transaction's fixed costs are paid once for them all. Without
 * deletes, the changes are grouped by table in dependency order (each table's rows keep their order), so
 * each table is one batch; with deletes, they stay in their order.
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

interface SourceTransaction { changes: Change[]; file: string; pos: number; gtid: string | null; time: number }

type RowsEvent = BinlogEvent & { rows: Record<string, unknown>[] | { before: Record<string, unknown>; after: Record<string, unknown> }[];
  tableId: number; tableMap: Record<number, { tableName: string; parentSchema: string }> };

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
  const reached = (file: string, pos: number) => !!end && (file > end.file || (file === end.file && pos >= end.pos));
  let applied = { file: saved.binlog_file, pos: Number(saved.binlog_pos) };
  const zongji = new ZongJi(connectionOptions(c.target) as never);
  const queue: SourceTransaction[] = [];
  let pending: Change[] = [];
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let lastEventAt = Date.now();
  const notify = () => { const w = wake; wake = null; w?.(); };
  let paused = false;
  const binlogConnection = () => (zongji as unknown as { connection?: { pause(): void; resume(): void } }).connection;

  zongji.on('binlog', (event: BinlogEvent) => {
    lastEventAt = Date.now();
    const type = event.getEventName();
    if (type === 'writerows' || type === 'updaterows' || type === 'deleterows') {
      const e = event as RowsEvent;
      const table = e.tableMap[e.tableId]?.tableName ?? '';
      if (ignoredTables.has(table) || !(syncedTables as readonly string[]).includes(table)) return;
      for (const r of e.rows) {
        if (type === 'updaterows') {
          const u = r as { before: Record<string, unknown>; after: Record<string, unknown> };
          pending.push({ table, kind: 'update', row: u.after, before: u.before });
        } else pending.push({ table, kind: type === 'writerows' ? 'insert' : 'delete', row: r as Record<string, unknown> });
      }
    } else if (type === 'xid' || (type === 'query' && /^\s*COMMIT/i.test((event as unknown as { query: string }).query))) {
      const options = (zongji as unknown as { options: { filename: string } }).options;
      queue.push({ changes: pending, file: options.filename, pos: event.nextPosition, gtid: event.gtid ?? null, time: event.timestamp });
      pending = [];
      c.metrics.lagEvents.set(queue.length);
      // bounded memory: stop reading the stream while PostgreSQL is behind (a backlog after an outage)
      if (queue.length >= highWater && !paused) {
        paused = true;
        binlogConnection()?.pause();
        c.log.info({ queued: queue.length }, 'binlog stream paused until the backlog is applied');
      }
      notify();
    }
  });
  zongji.on('error', (error: Error) => { failure = error; notify(); });
  const ready = new Promise<void>((resolve) => zongji.on('ready', () => resolve()));
  zongji.start({
    serverId: c.serverId, filename: saved.binlog_file, position: Number(saved.binlog_pos),
    includeEvents: ['rotate', 'tablemap', 'writerows', 'updaterows', 'deleterows', 'xid', 'query'],
    includeSchema: { [c.target.database]: true },
  } as never);
  let stopped = false;
  void c.stopSignal.then(() => { stopped = true; notify(); });
  c.log.info({ file: saved.binlog_file, pos: saved.binlog_pos }, 'binlog follow starts');
  let lastSavedAt = 0;
  const rewound = new Map<string, string | null>();
  let rewoundSince = 0;
  try {
    await Promise.race([ready, new Promise<void>((_, reject) => {
      const t = setInterval(() => { if (failure) { clearInterval(t); reject(failure); } }, 50);
      void ready.then(() => clearInterval(t));
    })]);
    for (;;) {
      if (failure) throw failure;
      if (stopped) return; // SIGTERM: the transaction in hand was committed, the rest is read again next time
      const txn = merge(queue);
      // a rewind seen (a lowered height, deletes): the chain is re-synced once the stream is quiet, or after 2 s
      if (rewound.size && (!txn || Date.now() - rewoundSince > 2_000)) {
        const conn = await connectSource(c.target);
        try {
          for (const [chain, height] of rewound) await resyncChain(c.sql, conn, chain, height, c.apply, c.log);
        } finally {
          await conn.end().catch(() => {});
        }
        rewound.clear();
      }
      if (!txn) {
        c.metrics.lagSeconds.set(0);
        if (stopped) return;
        // --once: caught up at the start position (or when the stream has been quiet for a while)
        if (c.once && (reached(applied.file, applied.pos) || Date.now() - lastEventAt > 5_000)) return;
        await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 200); });
        continue;
      }
      c.metrics.lagEvents.set(queue.length);
      if (paused && queue.length <= lowWater) {
        paused = false;
        binlogConnection()?.resume();
      }
      c.metrics.lagSeconds.set(Math.max(0, (Date.now() - txn.time) / 1000));
      // foreign transactions (other schemas, ignored tables) only move the position, at most every 5 s
      if (txn.changes.length === 0 && Date.now() - lastSavedAt < 5_000 && queue.length > 0) continue;
      await c.sql.begin(async (tx) => {
        await applyChanges(tx as Tx, txn.changes, c.apply);
        await state.savePosition(tx, { mode: 'binlog', file: txn.file, pos: txn.pos, gtid: txn.gtid, sourceTime: new Date(txn.time) });
      });
      lastSavedAt = Date.now();
      applied = { file: txn.file, pos: txn.pos };
      for (const [chain, height] of rewoundChains(txn.changes)) {
        if (!rewound.size) rewoundSince = Date.now();
        if (!rewound.has(chain) || height !== null) rewound.set(chain, height);
      }
      if (txn.changes.length) c.metrics.transactions.inc();
      c.metrics.setPosition(txn.file, txn.pos);
      c.metrics.lastApplied.set(Date.now() / 1000);
    }
  } finally {
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, 2_000);
      zongji.on('stopped', () => { clearTimeout(t); resolve(); });
      zongji.stop();
    });
  }
}

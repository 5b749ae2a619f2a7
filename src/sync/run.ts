// The sync command: preflight, backfill if needed, then follow (binlog or polling) until SIGTERM, or
// until caught up with --once. Source or target outages are retried with backoff from the saved position;
// a row that cannot be mapped stops the sync (or is reported and skipped with --skip-bad-rows).
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { createSql, type Sql } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { recordSource } from './target/state.js';
import type { ApplyOptions } from './apply.js';
import { backfill } from './backfill.js';
import { followBinlog } from './binlog.js';
import type { LevelWithSilent } from 'pino';
import { createLogger, type Logger } from '../observability/logger.js';
import { BadRowError, parseZone } from './mapping.js';
import { createSyncMetrics, serveMetrics, type SyncMetrics } from './metrics.js';
import type { SyncOptions } from './options.js';
import { followPolling } from './polling.js';
import { formatPreflight, preflight, type PreflightReport } from './preflight.js';
import { connectSource, parseSourceUrl, type SourceConnection, type SourceTarget } from './source/connection.js';
import { formatVerify, verify } from './verify.js';
import { formatValues, verifyValues } from './verify-values.js';

const transientCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND',
  'PROTOCOL_CONNECTION_LOST', 'PROTOCOL_SEQUENCE_TIMEOUT', 'ER_SERVER_SHUTDOWN', 'ER_CON_COUNT_ERROR',
  'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', '57P01', '57P02', '57P03',
  '08000', '08003', '08006', '08001', '08004', '53300']);

/** A connection-level failure of the source or the target: retried, never fatal. */
function isTransient(error: unknown): boolean {
  const e = error as { code?: string; errno?: string; message?: string; fatal?: boolean };
  if (e?.code && transientCodes.has(e.code)) return true;
  return /ECONNREFUSED|ECONNRESET|connection (lost|closed|terminated)|server has gone away|shutdown in progress|read ECONNRESET|write after end|closed state|Connection lost/i
    .test(e?.message ?? '') || sameServerId(error);
}

/** The source dropped this binlog connection for another replica with the same server id (a second sync,
 *  a replica): retried with backoff (the other one may be gone, or be a sync started by mistake). */
function sameServerId(error: unknown): boolean {
  return /same server_uuid\/server_id|same server_id/i.test((error as Error)?.message ?? '');
}

/** The default --server-id: derived from the target (its host, port and database), so two syncs into two
 *  read models never share one (a shared id makes the source drop the first's binlog connection), and a
 *  sync keeps its id across restarts. In 1,000,000–4,200,000,000: clear of the small ids servers are given. */
export function defaultServerId(databaseUrl: string): number {
  let host = databaseUrl;
  try {
    const u = new URL(databaseUrl);
    host = `${u.hostname}:${u.port || '5432'}${u.pathname}${u.searchParams.get('host') ?? ''}`;
  } catch { /* not a URL: hashed as it is */ }
  let h = 0x811c9dc5; // FNV-1a
  for (const ch of Buffer.from(host)) h = Math.imul(h ^ ch, 0x01000193) >>> 0;
  return 1_000_000 + (h % 4_199_000_000);
}

/** A server that answered and refused: wrong password, missing role or database, no privilege. Retrying
 *  cannot help; the run ends with one clear REFUSED line (never a stack trace). */
const refusedCodes = new Set(['ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR', 'ER_HOST_NOT_PRIVILEGED',
  'ER_TABLEACCESS_DENIED_ERROR', 'ER_SPECIFIC_ACCESS_DENIED_ERROR', 'SQLITE_CANTOPEN', 'SQLITE_AUTH',
  '28P01', '28000', '3D000', '42501']);

function refusal(error: unknown, sourcePort: number): string | null {
  const e = error as { code?: string; message?: string };
  if (!e?.code || !refusedCodes.has(e.code)) return null;
  return `the ${sideOf(error, sourcePort)} refused: ${e.message ?? e.code} (${e.code})`;
}

/** Which server failed: mysql2 and zongji errors carry a MySQL code or the source's port. */
function sideOf(error: unknown, sourcePort: number): 'source' | 'target' {
  const e = error as { port?: number; code?: string; sqlState?: string; errno?: number };
  if (e.port !== undefined) return e.port === sourcePort ? 'source' : 'target';
  if (e.sqlState !== undefined || /^(PROTOCOL_|ER_|SQLITE_)/.test(e.code ?? '')) return 'source';
  return 'target';
}

/** Heap growth capped at 1.3× the live heap, as the gateway does it (src/main.ts): V8's default lets the
 *  follow's and the backfill's short-lived rows grow the RSS far past the live heap (bench:sync measures it).
 *  Growth flags given to node win. */
function heapPolicy(): void {
  if (!/--(heap-growing-percent|max-heap-size)/.test(`${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`)) {
    setFlagsFromString('--heap-growing-percent=30');
  }
}

/** --verify: 0 when the read model matches the source, 1 with a table of differences, 2 when either side fails. */
async function runVerify(options: SyncOptions, target: SourceTarget): Promise<number> {
  // read-only unless --repair: a plain --verify writes nothing
  const sql = createSql({ url: options['database-url'], poolMax: 1, statementTimeoutMs: 0, connectTimeoutS: 10, readOnly: !options.repair });
  let conn: SourceConnection | null = null;
  try {
    conn = await connectSource(target);
    const report = await verify(conn, sql);
    process.stdout.write(`${formatVerify(report)}\n`);
    const zoneOffset = parseZone(options['source-time-zone']);
    const ctx = { zoneMinutes: zoneOffset ?? 0, zoneName: zoneOffset === null ? options['source-time-zone'] : undefined };
    const values = await verifyValues(conn, sql, { ctx, batchSize: options['batch-size'], repair: options.repair });
    process.stdout.write(`${formatValues(values)}\n`);
    return report.differences.length || values.differences.length ? 1 : 0;
  } catch (error) {
    process.stderr.write(`--verify failed: ${(error as Error).message}\n`);
    return 2;
  } finally {
    await conn?.end().catch(() => {});
    await sql.end({ timeout: 5 }).catch(() => {});
  }
}

/** What every attempt of a run shares. */
interface SyncRun {
  options: SyncOptions;
  target: SourceTarget;
  log: Logger;
  metrics: SyncMetrics;
  apply: ApplyOptions;
  serverId: number;
  stopSignal: Promise<void>;
  stopping: () => boolean;
}

function applyOptions(options: SyncOptions, metrics: SyncMetrics, log: Logger): ApplyOptions {
  const zoneOffset = parseZone(options['source-time-zone']);
  return {
    ctx: { zoneMinutes: zoneOffset ?? 0, zoneName: zoneOffset === null ? options['source-time-zone'] : undefined },
    skipBadRows: options['skip-bad-rows'],
    onBadRow: (error) => {
      metrics.badRows.inc({ table: error.table });
      metrics.errors.inc({ kind: 'bad_row' });
      log.error({ table: error.table, id: error.id, column: error.column, err: error.message }, 'bad row skipped');
    },
    onApplied: (table, n) => metrics.rowsApplied.inc({ table, phase: 'follow' }, n),
    onDuplicateDeployHash: (d) => log.warn({ chain: d.chain, deployHash: d.deploy_hash, tickId: d.tick_id, firstId: d.first_id },
      'duplicate (chain, deploy_hash) in the source: look-ups by deploy hash answer the first tick'),
  };
}

/** The preflight (after the migrations unless --dry-run); returns the exit code when the run ends there. */
async function checkBeforeSync(r: SyncRun, sql: Sql): Promise<{ exit: number } | { report: PreflightReport }> {
  const { options, target, log } = r;
  const conn = await connectSource(target);
  let report: PreflightReport;
  try {
    if (!options['dry-run']) await migrate(sql);
    report = await preflight(conn, sql, target, options.mode, r.serverId);
  } finally {
    await conn.end().catch(() => {});
  }
  log.info({ preflight: { ...report, state: undefined } }, 'preflight');
  for (const warning of report.warnings) log.warn({ warning }, 'preflight: a source row the read model cannot hold as it is');
  if (options['dry-run'] || report.refusals.length) process.stdout.write(`${formatPreflight(report)}\n`);
  if (report.refusals.length) {
    log.error({ refusals: report.refusals }, 'preflight refused');
    return { exit: 1 };
  }
  return options['dry-run'] ? { exit: 0 } : { report };
}

/** One attempt: preflight, backfill (or its resumption), then the follow until stopped. */
async function attempt(r: SyncRun, sql: Sql, connected: () => void): Promise<number> {
  const { options, target, log, metrics, apply, stopSignal } = r;
  const checked = await checkBeforeSync(r, sql);
  if ('exit' in checked) return checked.exit;
  const { report } = checked;
  await recordSource(sql, { serverUuid: report.source.serverUuid, database: target.database });
  // a read model filled for polling has no binlog position to start from: it keeps polling
  const mode = report.state?.mode === 'polling' ? 'polling' : report.mode;
  heapPolicy();
  const result = await backfill({
    sql, databaseUrl: options['database-url'], target, mode, batchSize: options['batch-size'],
    pollOverlapS: options['poll-overlap-s'], apply, log, metrics, stopping: r.stopping,
  });
  if (result === 'stopped' || r.stopping()) return 0;
  connected();
  if (mode === 'binlog') {
    await followBinlog({ sql, target, serverId: r.serverId, apply, log, metrics, stopSignal, once: options.once });
  } else {
    await followPolling({
      sql, target, apply, log, metrics, stopSignal, once: options.once, intervalMs: options['poll-interval-ms'],
      overlapS: options['poll-overlap-s'], sweepIds: options['poll-sweep-ids'], gapExpiryS: options['gap-expiry-s'], batchSize: options['batch-size'],
      reconcileIntervalS: options['reconcile-interval-s'],
    });
  }
  log.info('sync stopped');
  return 0;
}

/** The exit code an attempt's error ends the run with, or null when it is retried. */
function exitFor(r: SyncRun, error: unknown): number | null {
  const { metrics, log, target } = r;
  if (error instanceof BadRowError) {
    metrics.errors.inc({ kind: 'bad_row' });
    log.error({ table: error.table, id: error.id, column: error.column, err: error.message },
      'a source row cannot be mapped: the sync stops (fix the row, or run with --skip-bad-rows to report and skip it)');
    return 1;
  }
  const refused = refusal(error, target.port);
  if (refused) {
    metrics.errors.inc({ kind: 'fatal' });
    process.stdout.write(`REFUSED       ${refused}\n`);
    log.error({ err: refused }, 'sync refused');
    return 1;
  }
  if (r.options['dry-run'] && isTransient(error)) {
    process.stdout.write(`REFUSED       the ${sideOf(error, target.port)} is unreachable: ${(error as Error).message}\n`);
    return 1;
  }
  if (!isTransient(error)) {
    metrics.errors.inc({ kind: 'fatal' });
    log.error({ err: error }, 'sync failed');
    return 1;
  }
  return null;
}

export async function runSync(options: SyncOptions, log: Logger = syncLogger(options['log-level'])): Promise<number> {
  const target = parseSourceUrl(options.source);
  if (options.verify) return runVerify(options, target);
  const metrics = createSyncMetrics();
  let stop!: () => void;
  const stopSignal = new Promise<void>((resolve) => { stop = resolve; });
  let stopping = false;
  const onSignal = (signal: string) => {
    log.info({ signal }, 'stopping after the transaction in hand');
    stopping = true;
    stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  let metricsServer: Server | null = null;
  if (!options['dry-run']) {
    const served = await serveMetrics(metrics, options['metrics-host'], options['metrics-port']);
    metricsServer = served.server;
    log.info({ port: served.port }, 'metrics listening');
  }
  // a new client per attempt: a connection the driver lost mid-write may never flush again (porsager/postgres#1154)
  const connectTarget = (): Sql => createSql({ url: options['database-url'], poolMax: 3, statementTimeoutMs: 0, connectTimeoutS: 10, readOnly: false });
  let sql: Sql = connectTarget();
  const r: SyncRun = {
    options, target, log, metrics, apply: applyOptions(options, metrics, log), stopSignal, stopping: () => stopping,
    serverId: options['server-id'] ?? defaultServerId(options['database-url']),
  };
  let delay = 250;
  try {
    for (;;) {
      try {
        return await attempt(r, sql, () => { delay = 250; });
      } catch (error) {
        await sql.end({ timeout: 1 }).catch(() => {});
        sql = connectTarget();
        const exit = exitFor(r, error);
        if (exit !== null) return exit;
        const side = sideOf(error, target.port);
        metrics.errors.inc({ kind: side });
        if (sameServerId(error)) {
          log.warn({ serverId: r.serverId, retryInMs: delay }, 'the source dropped the binlog connection: another replica uses the same --server-id; retrying');
        }
        log.warn({ side, err: (error as Error).message, code: (error as { code?: string }).code, retryInMs: delay },
          'source or target unavailable: retrying');
        await Promise.race([new Promise((resolve) => setTimeout(resolve, delay)), stopSignal]);
        if (stopping) return 0;
        delay = Math.min(delay * 2, 10_000);
      }
    }
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    metricsServer?.close();
    await sql.end({ timeout: 5 }).catch(() => {});
  }
}

/** JSON lines on stdout, one logger for the whole sync process (its lines marked `igw-sync`). */
export function syncLogger(level: string): Logger {
  return createLogger({ level: level as LevelWithSilent, service: 'igw-sync' });
}

// Change-data-capture capabilities of the source: is a ROW binlog on, may this account read it, is the
// saved position still there. And the source's identity and binlog positions.
import type { SourceConnection } from './connection.js';

export interface BinlogPosition { file: string; pos: number; gtid: string | null }

export interface CdcReport {
  logBin: boolean;
  format: string;
  privileges: { replicationSlave: boolean; replicationClient: boolean };
  /** null when no position is saved; false when its file was purged (a new backfill is needed) */
  savedPositionAvailable: boolean | null;
  flavor: 'mariadb' | 'mysql' | 'sqlite';
  version: string;
  binlogUsable: boolean;
  reasons: string[];
}

async function variable(conn: SourceConnection, name: string): Promise<string | null> {
  const [rows] = await conn.query('SHOW GLOBAL VARIABLES LIKE ?', [name]);
  const row = (rows as { Value: string }[])[0];
  return row ? row.Value : null;
}

export async function sourceIdentity(conn: SourceConnection, target?: { path?: string }): Promise<{ serverUuid: string; version: string }> {
  if (conn.dialect === 'sqlite') {
    const [rows] = await conn.query('SELECT sqlite_version() AS v');
    return { serverUuid: `sqlite:${target?.path ?? ''}`, version: `SQLite ${(rows as { v: string }[])[0]!.v}` };
  }
  const [rows] = await conn.query('SELECT @@version AS version');
  const version = (rows as { version: string }[])[0]!.version;
  // MySQL has server_uuid; MariaDB has none: its server_id plus the GTID domain names the server
  const uuid = await variable(conn, 'server_uuid');
  if (uuid) return { serverUuid: uuid, version };
  const serverId = await variable(conn, 'server_id');
  const domain = await variable(conn, 'gtid_domain_id');
  return { serverUuid: `mariadb:${domain ?? 0}-${serverId ?? 0}`, version };
}

export async function checkCdc(conn: SourceConnection, saved: { file: string | null }): Promise<CdcReport> {
  if (conn.dialect === 'sqlite') {
    return { logBin: false, format: '', privileges: { replicationSlave: false, replicationClient: false }, savedPositionAvailable: null,
      flavor: 'sqlite', version: (await sourceIdentity(conn)).version, binlogUsable: false, reasons: ['an SQLite source has no binlog'] };
  }
  const [vrows] = await conn.query('SELECT @@version AS version');
  const version = (vrows as { version: string }[])[0]!.version;
  const flavor = /mariadb/i.test(version) ? 'mariadb' : 'mysql';
  const logBin = (await variable(conn, 'log_bin')) === 'ON';
  const format = (await variable(conn, 'binlog_format')) ?? '';
  const [grants] = await conn.query('SHOW GRANTS');
  const text = (grants as Record<string, string>[]).map((g) => Object.values(g)[0]).join('\n').toUpperCase();
  const all = /GRANT ALL PRIVILEGES ON \*\.\*/.test(text);
  const privileges = {
    replicationSlave: all || /REPLICATION (SLAVE|REPLICA)/.test(text),
    replicationClient: all || /REPLICATION CLIENT|BINLOG MONITOR/.test(text),
  };
  let savedPositionAvailable: boolean | null = null;
  const reasons: string[] = [];
  if (!logBin) reasons.push('the binary log is off (log_bin=OFF)');
  else if (format.toUpperCase() !== 'ROW') reasons.push(`binlog_format is ${format}, not ROW`);
  if (!privileges.replicationSlave) reasons.push('the account lacks REPLICATION SLAVE');
  if (!privileges.replicationClient) reasons.push('the account lacks REPLICATION CLIENT');
  if (logBin && saved.file) {
    try {
      const [logs] = await conn.query('SHOW BINARY LOGS');
      savedPositionAvailable = (logs as { Log_name: string }[]).some((l) => l.Log_name === saved.file);
      if (!savedPositionAvailable) reasons.push(`the saved binlog file ${saved.file} was purged`);
    } catch (error) {
      reasons.push(`cannot list binary logs: ${(error as Error).message}`);
    }
  }
  return { logBin, format, privileges, savedPositionAvailable, flavor, version, binlogUsable: reasons.length === 0, reasons };
}

/** The current end of the binlog (read before a snapshot starts: following from there re-applies a few
 *  changes the snapshot already holds, which the idempotent apply absorbs, and loses none). */
export async function currentPosition(conn: SourceConnection): Promise<BinlogPosition | null> {
  // MySQL 8.4 renamed SHOW MASTER STATUS
  const [rows] = await conn.query('SHOW MASTER STATUS').catch(() => conn.query('SHOW BINARY LOG STATUS'));
  const row = (rows as { File: string; Position: number | string }[])[0];
  if (!row) return null;
  let gtid: string | null = null;
  try {
    const [g] = await conn.query('SELECT @@gtid_binlog_pos AS g');
    gtid = (g as { g: string }[])[0]?.g ?? null;
  } catch {
    // MySQL: the executed GTID set instead
    const [g] = await conn.query('SELECT @@gtid_executed AS g').catch(() => [[]]);
    gtid = (g as { g: string }[])[0]?.g || null;
  }
  return { file: row.File, pos: Number(row.Position), gtid };
}

/** The binlog position of the snapshot just started: MariaDB reports it; otherwise the one read before it. */
export async function snapshotBinlogPosition(conn: SourceConnection, before: BinlogPosition | null): Promise<BinlogPosition | null> {
  if (!before) return null;
  const [rows] = await conn.query(`SHOW STATUS LIKE 'binlog_snapshot_%'`);
  const status = Object.fromEntries((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name, r.Value]));
  if (status.binlog_snapshot_file && status.binlog_snapshot_position) {
    return { file: status.binlog_snapshot_file, pos: Number(status.binlog_snapshot_position), gtid: before.gtid };
  }
  return before;
}

/** The binlog position the session's snapshot holds everything before, where the server names it (MariaDB). */
export async function sessionSnapshotPosition(conn: SourceConnection): Promise<{ file: string; pos: number } | null> {
  const [rows] = await conn.query("SHOW SESSION STATUS LIKE 'binlog_snapshot_%'");
  const named = new Map((rows as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name.toLowerCase(), r.Value]));
  const file = named.get('binlog_snapshot_file');
  return file ? { file, pos: Number(named.get('binlog_snapshot_position')) } : null;
}

export const samePosition = (a: { file: string; pos: number } | null, b: { file: string; pos: number } | null) => !!a && !!b && a.file === b.file && a.pos === b.pos;

/** Starts a consistent snapshot on `conn` and returns the binlog position it holds everything before:
 *  MariaDB names it (Binlog_snapshot_*); elsewhere it is the end of the binlog when that did not move
 *  while the snapshot began (tried again until it holds still). */
export async function startSnapshotAt(conn: SourceConnection): Promise<BinlogPosition | null> {
  for (let attempt = 0; ; attempt++) {
    const before = await currentPosition(conn);
    await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const [status] = await conn.query("SHOW SESSION STATUS LIKE 'binlog_snapshot_%'");
    const named = new Map((status as { Variable_name: string; Value: string }[]).map((r) => [r.Variable_name.toLowerCase(), r.Value]));
    const file = named.get('binlog_snapshot_file');
    if (file) return { file, pos: Number(named.get('binlog_snapshot_position')), gtid: null };
    const after = await currentPosition(conn);
    if (samePosition(before, after) || attempt >= 50) return after;
    await conn.query('COMMIT');
  }
}

/** Whether binlog position `a` is at or after `b`. */
export const atOrAfter = (a: { file: string; pos: number }, b: { file: string; pos: number }) =>
  a.file > b.file || (a.file === b.file && a.pos >= b.pos);

/** The source database clock (UTC, as text) — polling windows are measured on it. */
export async function sourceNow(conn: SourceConnection): Promise<string> {
  if (conn.dialect === 'sqlite') {
    const [rows] = await conn.query(`SELECT strftime('%Y-%m-%d %H:%M:%S', 'now') AS now`);
    return (rows as { now: string }[])[0]!.now;
  }
  const [rows] = await conn.query(`SELECT DATE_FORMAT(UTC_TIMESTAMP(), '%Y-%m-%d %H:%i:%s') AS now`);
  return (rows as { now: string }[])[0]!.now;
}

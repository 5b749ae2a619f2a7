// Before anything is written: the source answers, has every table and column the sync reads, which
// change-data-capture mode is possible, the target's schema version, and that the source is the one this
// read model was filled from (two indexes are never mixed).
import type { Sql } from '../db/client.js';
import { listMigrations } from '../db/migrate.js';
import { readSourceState, type SyncSourceState } from '../db/sync-state.js';
import { checkCdc, sourceIdentity, type CdcReport } from './source/cdc.js';
import type { SourceConnection } from './source/connection.js';
import { checkSourceSchema, type SchemaProblem } from './source/schema.js';

export interface PreflightReport {
  source: { version: string; serverUuid: string; database: string };
  schemaProblems: SchemaProblem[];
  cdc: CdcReport;
  mode: 'binlog' | 'polling';
  target: { schemaVersion: string | null; pending: string[] };
  state: SyncSourceState | null;
  /** reasons the sync must not run; empty = go */
  refusals: string[];
}

export async function preflight(conn: SourceConnection, sql: Sql, database: string | { database: string; path?: string },
  requested: 'auto' | 'binlog' | 'polling'): Promise<PreflightReport> {
  const target = typeof database === 'string' ? { database } : database;
  database = target.database;
  const identity = await sourceIdentity(conn, target);
  const schemaProblems = await checkSourceSchema(conn, database);
  const [applied] = await sql<{ v: string | null; n: string }[]>`
    SELECT max(version) AS v, count(*)::text AS n FROM schema_migrations`.catch(() => [{ v: null, n: '0' }]);
  const done = new Set((await sql<{ version: string }[]>`SELECT version FROM schema_migrations`.catch(() => [])).map((r) => r.version));
  const pending = listMigrations().map((m) => m.version).filter((v) => !done.has(v));
  const state = done.has('008_sync') ? await readSourceState(sql) : null;
  const cdc = await checkCdc(conn, { file: state?.mode === 'binlog' ? state.binlog_file : null });
  const refusals: string[] = [];
  for (const p of schemaProblems) {
    refusals.push(p.column
      ? `source column ${p.table}.${p.column} is missing (added by the indexer's db/${p.addedBy})`
      : `source table ${p.table} is missing (created by the indexer's db/${p.addedBy})`);
  }
  if (state && (state.server_uuid !== identity.serverUuid || state.source_database !== database)) {
    refusals.push(`this read model was filled from ${state.server_uuid}/${state.source_database}, not from ` +
      `${identity.serverUuid}/${database}: refusing to mix two indexes (use an empty read model for another source)`);
  }
  let mode: 'binlog' | 'polling';
  if (requested === 'polling') mode = 'polling';
  else if (cdc.binlogUsable) mode = 'binlog';
  else if (requested === 'binlog' && conn.dialect === 'sqlite') {
    mode = 'polling';
    refusals.push('--mode binlog is not possible: an SQLite source has no binlog (use --mode polling)');
  } else if (requested === 'binlog') {
    mode = 'binlog';
    refusals.push(`--mode binlog is not possible: ${cdc.reasons.join('; ')}`);
  } else mode = 'polling';
  // a backfill followed by the binlog needs the saved file; if it was purged, changes since are gone
  if (state?.mode === 'binlog' && mode === 'binlog' && cdc.savedPositionAvailable === false) {
    refusals.push(`the saved binlog position ${state.binlog_file}:${state.binlog_pos} was purged on the source: ` +
      'changes since then cannot be read; re-sync into an empty read model');
  }
  return {
    source: { version: identity.version, serverUuid: identity.serverUuid, database },
    schemaProblems, cdc, mode,
    target: { schemaVersion: applied?.v ?? null, pending },
    state, refusals,
  };
}

export function formatPreflight(r: PreflightReport): string {
  const lines = [
    `source        ${r.source.database} on ${r.source.version} (${r.source.serverUuid})`,
    `source schema ${r.schemaProblems.length === 0 ? 'every table and column present' : `${r.schemaProblems.length} missing`}`,
    `binlog        ${r.cdc.logBin ? `on, format ${r.cdc.format}` : 'off'}; REPLICATION SLAVE ${r.cdc.privileges.replicationSlave ? 'yes' : 'no'}, ` +
      `REPLICATION CLIENT ${r.cdc.privileges.replicationClient ? 'yes' : 'no'}` +
      (r.cdc.savedPositionAvailable === null ? '' : `; saved position ${r.cdc.savedPositionAvailable ? 'available' : 'PURGED'}`),
    `follow mode   ${r.mode}${r.mode === 'polling' && r.cdc.reasons.length ? ` (binlog not usable: ${r.cdc.reasons.join('; ')})` : ''}`,
    `target schema ${r.target.schemaVersion ?? 'empty'}${r.target.pending.length ? `; to apply: ${r.target.pending.join(', ')}` : ''}`,
    `state         ${r.state ? `backfill ${r.state.backfill_done ? 'done' : 'in progress'}, mode ${r.state.mode ?? '-'}, ` +
      `position ${r.state.binlog_file ?? '-'}:${r.state.binlog_pos ?? '-'}` : 'first run'}`,
  ];
  for (const refusal of r.refusals) lines.push(`REFUSED       ${refusal}`);
  return lines.join('\n');
}

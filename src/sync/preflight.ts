// Before anything is written: the source answers, has every table and column the sync reads, which
// change-data-capture mode is possible, the target's schema version, and that the source is the one this
// read model was filled from (two indexes are never mixed).
import type { Sql } from '../db/client.js';
import { listMigrations } from '../db/migrate.js';
import { readSourceState, type SyncSourceState } from './target/state.js';
import { checkCdc, sourceIdentity, type CdcReport } from './source/cdc.js';
import type { SourceConnection } from './source/connection.js';
import { checkSourceSchema, type SchemaProblem } from './source/schema.js';
import { caseOnlyTicks, outOfRangeTxs, serverIdsInUse } from './source/hazards.js';

export interface PreflightReport {
  source: { version: string; serverUuid: string; database: string };
  schemaProblems: SchemaProblem[];
  cdc: CdcReport;
  mode: 'binlog' | 'polling';
  target: { schemaVersion: string | null; pending: string[] };
  state: SyncSourceState | null;
  /** reasons the sync must not run; empty = go */
  refusals: string[];
  /** source rows the read model cannot hold as they are (bad rows: the sync stops on them, or skips them
   *  with --skip-bad-rows), found by sampling the source */
  warnings: string[];
}

/** How many of the newest txs rows the preflight samples for out-of-range values (the table may hold 20 M). */
const hazardSample = 10_000;

/**
 * The known hazards, sampled: inscriptions differing only in the case of their tick (the whole table: it
 * holds one row per tick), and txs heights or positions above PostgreSQL's bigint (the newest rows).
 */
async function sampleHazards(conn: SourceConnection): Promise<string[]> {
  const warnings: string[] = [];
  for (const d of await caseOnlyTicks(conn)) {
    warnings.push(`inscriptions: ${d.n} ticks ${d.chain}/${d.protocol}/${d.tick} differ only in case (the indexer lower-cases ticks): ` +
      `inscription ${d.first_id} is kept, the others and their rows are bad rows`);
  }
  for (const b of await outOfRangeTxs(conn, hazardSample)) {
    warnings.push(`txs row ${String(b.id)}: block_height ${String(b.block_height)} / position_in_block ${String(b.position_in_block)} ` +
      'above the read model\'s bigint range: a bad row');
  }
  return warnings;
}

export async function preflight(conn: SourceConnection, sql: Sql, database: string | { database: string; path?: string },
  requested: 'auto' | 'binlog' | 'polling', serverId?: number): Promise<PreflightReport> {
  const target = typeof database === 'string' ? { database } : database;
  database = target.database;
  const identity = await sourceIdentity(conn, target);
  const schemaProblems = await checkSourceSchema(conn, database);
  const warnings = schemaProblems.length ? [] : await sampleHazards(conn);
  // the target answers (an unreachable server, a missing database or role throws: reported by the caller)
  // and the role can do what the sync does there
  const targetRefusals = await checkTarget(sql);
  const [applied] = await sql<{ v: string | null; n: string }[]>`
    SELECT max(version) AS v, count(*)::text AS n FROM schema_migrations`.catch(() => [{ v: null, n: '0' }]);
  const done = new Set((await sql<{ version: string }[]>`SELECT version FROM schema_migrations`.catch(() => [])).map((r) => r.version));
  const pending = listMigrations().map((m) => m.version).filter((v) => !done.has(v));
  const state = done.has('008_sync') ? await readSourceState(sql) : null;
  const cdc = await checkCdc(conn, { file: state?.mode === 'binlog' ? state.binlog_file : null });
  const refusals: string[] = [...targetRefusals];
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
  if (mode === 'binlog' && serverId !== undefined) {
    const clash = await serverIdClash(conn, serverId);
    if (clash) refusals.push(`--server-id ${serverId} is ${clash}: the source would drop one of the two binlog connections; pick another --server-id`);
  }
  // a backfill followed by the binlog needs the saved file; if it was purged, changes since are gone
  if (state?.mode === 'binlog' && mode === 'binlog' && cdc.savedPositionAvailable === false) {
    refusals.push(`the saved binlog position ${state.binlog_file}:${state.binlog_pos} was purged on the source: ` +
      'changes since then cannot be read; re-sync into an empty read model');
  }
  return {
    source: { version: identity.version, serverUuid: identity.serverUuid, database },
    schemaProblems, cdc, mode,
    target: { schemaVersion: applied?.v ?? null, pending },
    state, refusals, warnings,
  };
}

/** Who else uses `serverId` on the source: the server itself, or a replica it lists (SHOW SLAVE HOSTS: those
 *  that register; another sync does not, and is found by the follow instead, which retries). */
async function serverIdClash(conn: SourceConnection, serverId: number): Promise<string | null> {
  const { own, replicas } = await serverIdsInUse(conn);
  if (own === serverId) return 'the source server\'s own server_id';
  const replica = replicas.find((h) => Number(h.Server_id) === serverId);
  return replica ? `used by the replica ${String(replica.Host ?? '')}:${String(replica.Port ?? '')}` : null;
}

/** What the sync needs of the target role: a writable primary, CREATE in its schema while migrations are
 *  to apply, and writes to the read model's tables once they exist. */
async function checkTarget(sql: Sql): Promise<string[]> {
  const [t] = await sql<{ user: string; db: string; standby: boolean; create: boolean; schema: string | null; tables: boolean | null;
    migrated: boolean }[]>`
    SELECT current_user AS user, current_database() AS db, pg_is_in_recovery() AS standby, current_schema() AS schema,
           coalesce(has_schema_privilege(current_schema(), 'CREATE'), false) AS create,
           to_regclass('schema_migrations') IS NOT NULL AS migrated,
           CASE WHEN to_regclass('ticks') IS NULL THEN NULL
                ELSE has_table_privilege('ticks', 'INSERT, UPDATE, DELETE, TRUNCATE') END AS tables`;
  const refusals: string[] = [];
  const who = `role ${t!.user} on database ${t!.db}`;
  if (t!.standby) refusals.push(`the target (${who}) is a read-only standby: point --database-url at its primary`);
  else if (t!.schema === null) refusals.push(`the target (${who}) has no schema on its search_path to create the read model in`);
  else if (!t!.migrated && !t!.create) refusals.push(`the target ${who} may not CREATE in schema ${t!.schema}: the read model cannot be created`);
  else if (t!.tables === false) refusals.push(`the target ${who} may not write the read model's tables (INSERT, UPDATE, DELETE, TRUNCATE on ticks)`);
  return refusals;
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
  for (const warning of r.warnings) lines.push(`WARNING       ${warning}`);
  for (const refusal of r.refusals) lines.push(`REFUSED       ${refusal}`);
  return lines.join('\n');
}

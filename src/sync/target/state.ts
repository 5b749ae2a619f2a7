import type postgres from 'postgres';
import type { Sql } from '../../db/client.js';

// The sync's own state (sql/008_sync.sql): the source's identity and follow position, backfill ranges
// and polling watermarks. Writes take the caller's transaction so the state commits with the data.

type Tx = postgres.TransactionSql<Record<string, never>> | Sql;

export interface SyncSourceState {
  server_uuid: string;
  source_database: string;
  mode: 'binlog' | 'polling' | null;
  binlog_file: string | null;
  binlog_pos: string | null;
  gtid: string | null;
  backfill_done: boolean;
  source_time: Date | null;
  applied_at: Date | null;
}

export async function readSourceState(sql: Tx): Promise<SyncSourceState | null> {
  const [row] = await sql<SyncSourceState[]>`
    SELECT server_uuid, source_database, mode, binlog_file, binlog_pos::text AS binlog_pos, gtid, backfill_done,
           source_time, applied_at FROM sync_source`;
  return row ?? null;
}

export async function recordSource(sql: Tx, identity: { serverUuid: string; database: string }): Promise<void> {
  await sql`INSERT INTO sync_source (server_uuid, source_database) VALUES (${identity.serverUuid}, ${identity.database})
            ON CONFLICT (id) DO NOTHING`;
}

export async function savePosition(sql: Tx, p: { mode: 'binlog' | 'polling'; file?: string | null; pos?: number | null;
  gtid?: string | null; sourceTime?: Date | null }): Promise<void> {
  await sql`UPDATE sync_source SET mode = ${p.mode}, binlog_file = coalesce(${p.file ?? null}, binlog_file),
              binlog_pos = coalesce(${p.pos ?? null}::bigint, binlog_pos), gtid = coalesce(${p.gtid ?? null}, gtid),
              source_time = coalesce(${p.sourceTime ?? null}::timestamptz, source_time), applied_at = now()`;
}

export async function markBackfillDone(sql: Tx): Promise<void> {
  await sql`UPDATE sync_source SET backfill_done = true`;
}

export interface BackfillRange { source_table: string; last_id: string; max_id: string; rows_copied: string; done: boolean }

export async function readBackfill(sql: Tx): Promise<Map<string, BackfillRange>> {
  const rows = await sql<BackfillRange[]>`
    SELECT source_table, last_id::text AS last_id, max_id::text AS max_id, rows_copied::text AS rows_copied, done
      FROM sync_backfill`;
  return new Map(rows.map((r) => [r.source_table, r]));
}

export async function planBackfill(sql: Tx, table: string, maxId: string): Promise<void> {
  await sql`INSERT INTO sync_backfill (source_table, max_id) VALUES (${table}, ${maxId}::numeric)
            ON CONFLICT (source_table) DO NOTHING`;
}

export async function advanceBackfill(sql: Tx, table: string, lastId: string, rows: number, done: boolean): Promise<void> {
  await sql`UPDATE sync_backfill SET last_id = ${lastId}::numeric, rows_copied = rows_copied + ${rows}, done = ${done}
             WHERE source_table = ${table}`;
}

export interface DroppedIndex { name: string; table_name: string; def: string; constraint_kind: 'p' | 'u' | null }
export async function saveDroppedIndexes(sql: Tx, defs: { name: string; table: string; def: string; constraint: 'p' | 'u' | null }[]) {
  for (const d of defs) {
    await sql`INSERT INTO sync_dropped_indexes (name, table_name, def, constraint_kind)
              VALUES (${d.name}, ${d.table}, ${d.def}, ${d.constraint}) ON CONFLICT (name) DO NOTHING`;
  }
}
export async function readDroppedIndexes(sql: Tx): Promise<DroppedIndex[]> {
  return sql<DroppedIndex[]>`SELECT name, table_name, def, constraint_kind FROM sync_dropped_indexes ORDER BY name`;
}

export interface PollState { source_table: string; high_id: string; gaps: Record<string, number>; window_from: string | null }
export async function readPollState(sql: Tx): Promise<Map<string, PollState>> {
  const rows = await sql<PollState[]>`
    SELECT source_table, high_id::text AS high_id, gaps, to_char(window_from, 'YYYY-MM-DD HH24:MI:SS') AS window_from
      FROM sync_poll_state`;
  return new Map(rows.map((r) => [r.source_table, r]));
}
export async function savePollState(sql: Tx, s: PollState): Promise<void> {
  await sql`INSERT INTO sync_poll_state (source_table, high_id, gaps, window_from)
            VALUES (${s.source_table}, ${s.high_id}::numeric, ${sql.json(s.gaps as never)}, ${s.window_from}::timestamp)
            ON CONFLICT (source_table) DO UPDATE SET high_id = EXCLUDED.high_id, gaps = EXCLUDED.gaps,
                                                     window_from = EXCLUDED.window_from`;
}

/** A source inscription that differs from an earlier one only in the case of its tick (sql/019). */
export interface ShadowedTick { id: string; chain: string; protocol: string; tick: string; first_id: string }

export async function readShadowedTicks(sql: Tx): Promise<ShadowedTick[]> {
  return sql<ShadowedTick[]>`SELECT id::text AS id, chain, protocol, tick, first_id::text AS first_id FROM sync_shadowed_ticks`;
}

export async function recordShadowedTicks(sql: Tx, rows: ShadowedTick[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`INSERT INTO sync_shadowed_ticks (id, chain, protocol, tick, first_id)
    SELECT * FROM unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.chain)}::text[], ${rows.map((r) => r.protocol)}::text[],
                         ${rows.map((r) => r.tick)}::text[], ${rows.map((r) => r.first_id)}::bigint[])
    ON CONFLICT (id) DO NOTHING`;
}

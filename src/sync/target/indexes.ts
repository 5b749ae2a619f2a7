// Secondary indexes (and primary/unique keys no foreign key depends on) are dropped before the bulk load
// and rebuilt afterwards from the definitions the migrations created: sql/ stays the single source of
// truth, nothing here repeats an index definition.
import { totalmem } from 'node:os';
import type { Sql } from '../../db/client.js';

export interface IndexDef {
  table: string;
  name: string;
  /** pg_indexes.indexdef: a complete CREATE [UNIQUE] INDEX statement */
  def: string;
  /** the index backs this constraint (p = primary key, u = unique), re-attached with USING INDEX */
  constraint: 'p' | 'u' | null;
}

export interface IndexTiming { table: string; name: string; seconds: number }

/** Indexes of the tables that can be dropped for a load: every one except keys a foreign key needs. */
export async function captureIndexes(sql: Sql, tables: string[]): Promise<IndexDef[]> {
  const rows = await sql<{ table: string; name: string; def: string; contype: string | null; referenced: boolean }[]>`
    SELECT i.tablename AS table, i.indexname AS name, i.indexdef AS def, c.contype::text AS contype,
           EXISTS (SELECT 1 FROM pg_constraint f WHERE f.contype = 'f' AND f.confrelid = c.conrelid
                      AND f.conindid = c.conindid) AS referenced
      FROM pg_indexes i
      LEFT JOIN pg_constraint c
        ON c.conname = i.indexname AND c.conrelid = format('%I.%I', i.schemaname, i.tablename)::regclass
       AND c.contype IN ('p', 'u')
     WHERE i.schemaname = current_schema() AND i.tablename = ANY(${tables})
     ORDER BY i.tablename, i.indexname`;
  return rows
    .filter((r) => !r.referenced)
    .filter((r) => r.contype === null || r.contype === 'p' || r.contype === 'u')
    .map((r) => ({ table: r.table, name: r.name, def: r.def, constraint: (r.contype as 'p' | 'u' | null) ?? null }));
}

export async function dropIndexes(sql: Sql, defs: IndexDef[]): Promise<void> {
  for (const d of defs) {
    if (d.constraint) await sql.unsafe(`ALTER TABLE ${quote(d.table)} DROP CONSTRAINT ${quote(d.name)}`);
    else await sql.unsafe(`DROP INDEX ${quote(d.name)}`);
  }
}

/**
 * Rebuilds the indexes, `jobs` at a time (largest tables first), then re-attaches the constraints.
 * Several CREATE INDEX on one table run together (they take SHARE locks); each build is single-process
 * with a large maintenance_work_mem, so `jobs` ≈ the server's cores.
 */
export async function rebuildIndexes(
  sql: Sql, defs: IndexDef[], jobs: number,
  // the caller's progress display (bench/lib/indexes.ts: a bar on stderr): db draws nothing itself
  progress: (total: number) => { add(n: number): void; stop(): void } = () => ({ add() {}, stop() {} }),
): Promise<IndexTiming[]> {
  const sizes = new Map<string, number>();
  for (const t of new Set(defs.map((d) => d.table))) {
    const [row] = await sql<{ bytes: string }[]>`SELECT pg_table_size(${t}::regclass)::text AS bytes`;
    sizes.set(t, Number(row?.bytes ?? 0));
  }
  const queue = [...defs].sort((a, b) => sizes.get(b.table)! - sizes.get(a.table)! || a.name.localeCompare(b.name));
  const memMb = Math.max(64, Math.min(2048, Math.floor(totalmem() / 1024 / 1024 / (4 * jobs))));
  const bar = progress(defs.length);
  const timings: IndexTiming[] = [];
  const worker = async () => {
    for (let d = queue.shift(); d; d = queue.shift()) {
      const started = performance.now();
      await sql.begin(async (tx) => {
        await tx.unsafe(`SET LOCAL maintenance_work_mem = '${memMb}MB'`);
        await tx`SET LOCAL max_parallel_maintenance_workers = 0`;
        await tx.unsafe(d.def);
      });
      timings.push({ table: d.table, name: d.name, seconds: (performance.now() - started) / 1000 });
      bar.add(1);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  } finally {
    bar.stop();
  }
  for (const d of defs) {
    if (!d.constraint) continue;
    const kind = d.constraint === 'p' ? 'PRIMARY KEY' : 'UNIQUE';
    await sql.unsafe(`ALTER TABLE ${quote(d.table)} ADD CONSTRAINT ${quote(d.name)} ${kind} USING INDEX ${quote(d.name)}`);
  }
  return timings.sort((a, b) => b.seconds - a.seconds);
}

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { Sql } from './client.js';

const migrationsDir = fileURLToPath(new URL('../../sql/', import.meta.url));

/** Numbered files `NNN_name.sql` in sql/, in order. */
export function listMigrations(dir = migrationsDir): { version: string; file: string }[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}_.+\.sql$/.test(f))
    .sort()
    .map((file) => ({ version: file.replace(/\.sql$/, ''), file: join(dir, file) }));
}

/** The server is a hot standby: it cannot take writes, the migrations belong on its primary. */
export class StandbyError extends Error {
  constructor(readonly server: string, several = false) {
    super(`${server} ${several ? 'are read-only standbys' : 'is a read-only standby'}; run migrations against the primary`);
    this.name = 'StandbyError';
  }
}

/**
 * Applies the migrations not yet recorded in schema_migrations, each in its own transaction, under an
 * advisory lock so that two starts cannot apply the same file twice. Safe to run any number of times.
 * Returns the versions it applied.
 */
export async function migrate(sql: Sql, dir = migrationsDir, server = 'the database'): Promise<string[]> {
  const [state] = await sql<{ standby: boolean }[]>`SELECT pg_is_in_recovery() AS standby`;
  if (state?.standby) throw new StandbyError(server);
  await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
    version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
  const applied: string[] = [];
  for (const { version, file } of listMigrations(dir)) {
    const done = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(727274)`;
      const [row] = await tx`SELECT 1 FROM schema_migrations WHERE version = ${version}`;
      if (row) return false;
      await tx.unsafe(readFileSync(file, 'utf8'));
      await tx`INSERT INTO schema_migrations (version) VALUES (${version})`;
      return true;
    });
    if (done) applied.push(version);
  }
  return applied;
}

// The target database: created (or replaced) fresh for every load.
import postgres from 'postgres';

const DEFAULT_SERVER = 'postgres://postgres@127.0.0.1:5432';
const DEFAULT_DATABASE = 'igw_bench';

export interface Target { url: string; database: string; adminUrl: string }

export function resolveTarget(databaseUrl: string | undefined): Target {
  const url = new URL(databaseUrl ?? `${DEFAULT_SERVER}/${DEFAULT_DATABASE}`);
  if (!/^postgres(ql)?:$/.test(url.protocol)) throw new Error(`not a postgres:// URL: ${databaseUrl}`);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!database) throw new Error('the database URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return { url: url.toString(), database, adminUrl: admin.toString() };
}

/** A plain client for admin and check work (no statement timeout). */
export function connect(url: string, max = 1) {
  return postgres(url, {
    max, onnotice: () => {}, idle_timeout: 0,
    connection: { application_name: 'igw-bench', statement_timeout: 0 },
  });
}

/**
 * Drops and creates the database. An existing database is replaced only if its name starts with
 * `igw_bench` (the benchmark's own) or `replace` is set, so a mistyped URL cannot wipe a real one.
 * Refuses anything but a real PostgreSQL server ≥ 15 (COPY FROM STDIN would kill the embedded engine).
 */
export async function recreateDatabase(target: Target, replace: boolean): Promise<string> {
  const admin = connect(target.adminUrl);
  try {
    const [v] = await admin<{ version: string; num: number }[]>`
      SELECT version() AS version, current_setting('server_version_num')::int AS num`;
    if (!v || !/^PostgreSQL /.test(v.version) || /emscripten|wasm|pglite/i.test(v.version)) {
      throw new Error(`not a real PostgreSQL server: ${v?.version}`);
    }
    if (v.num < 150000) throw new Error(`PostgreSQL 15 or later needed (NULLS NOT DISTINCT): ${v.version}`);
    const [exists] = await admin`SELECT 1 FROM pg_database WHERE datname = ${target.database}`;
    if (exists) {
      if (!replace && !target.database.startsWith('igw_bench')) {
        throw new Error(`database ${target.database} exists; pass --replace to drop it`);
      }
      await admin.unsafe(`DROP DATABASE ${quote(target.database)} WITH (FORCE)`);
    }
    await admin.unsafe(`CREATE DATABASE ${quote(target.database)}`);
    return v.version;
  } finally {
    await admin.end({ timeout: 5 });
  }
}

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

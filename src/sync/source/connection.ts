// Connections to the indexer's database (the source adapter: all source-side SQL of the sync lives under
// src/sync/source). Two kinds:
// - MySQL/MariaDB (mysql://): sessions read in +00:00 so timestamps arrive as the wall-clock text the
//   indexer wrote; the sync converts them from the declared zone. DECIMAL and BIGINT arrive as exact strings.
// - SQLite (sqlite:///path/to/file.db): the file the indexer writes, opened read-only beside it (WAL: a
//   reader sees the last committed transaction and never blocks the writer). Polling only.
// Both answer `query(sql, params)` with `[rows]`; the few statements that differ are translated here.
import { basename, resolve } from 'node:path';
import type { Connection as CoreConnection } from 'mysql2';
import mysql from 'mysql2/promise';

export interface SourceTarget {
  kind: 'mysql' | 'sqlite';
  host: string; port: number; user: string; password: string;
  /** the MySQL database, or the SQLite file's name */
  database: string;
  /** SQLite: the database file */
  path?: string;
}

/** mysql://user:pass@host:port/db or sqlite:///path/to/file.db → connection settings. */
export function parseSourceUrl(url: string): SourceTarget {
  if (/^sqlite:/i.test(url)) {
    const path = decodeURIComponent(url.replace(/^sqlite:(\/\/)?/i, ''));
    if (!path) throw new Error('must name the file (sqlite:///path/to/file.db)');
    const file = resolve(path);
    return { kind: 'sqlite', host: '', port: 0, user: '', password: '', database: basename(file), path: file };
  }
  const u = new URL(url);
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new Error('must be a mysql:// URL');
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database) throw new Error('must name the database (mysql://user:pass@host:port/db)');
  return {
    kind: 'mysql', host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : 3306,
    user: decodeURIComponent(u.username || 'root'), password: decodeURIComponent(u.password), database,
  };
}

/** Options shared by query connections and the binlog reader (zongji decodes rows with the same ones). */
export function connectionOptions(target: SourceTarget) {
  return {
    host: target.host, port: target.port, user: target.user, password: target.password, database: target.database,
    timezone: 'Z', dateStrings: true, supportBigNumbers: true, bigNumberStrings: true, decimalNumbers: false,
    connectTimeout: 5_000,
  } as const;
}

export interface SourceConnection {
  readonly dialect: 'mysql' | 'sqlite';
  /** `[rows]` (an array of row objects for a SELECT) */
  query(sql: string, params?: unknown[]): Promise<[unknown, ...unknown[]]>;
  /**
   * A SELECT's rows handed to `onRow` one by one as they are decoded, none kept (the backfill maps each
   * row as it arrives: rows that die young cost the garbage collector next to nothing, a whole range held
   * as objects was promoted and collected again and again). An exception from `onRow` rejects the call
   * once the rest of the answer is drained (no later row is handed over).
   */
  each(sql: string, params: unknown[], onRow: (row: Record<string, unknown>) => void): Promise<void>;
  end(): Promise<void>;
}

export async function connectSource(target: SourceTarget): Promise<SourceConnection> {
  if (target.kind === 'sqlite') return openSqlite(target.path!);
  const conn = await mysql.createConnection(connectionOptions(target));
  await conn.query(`SET time_zone = '+00:00'`);
  return {
    dialect: 'mysql',
    query: (sql, params) => conn.query(sql, params) as unknown as Promise<[unknown]>,
    each: (sql, params, onRow) => new Promise<void>((resolve, reject) => {
      const core = (conn as unknown as { connection: CoreConnection }).connection;
      let failed: { error: unknown } | null = null;
      const done = () => {
        core.off('error', lost);
        if (failed) reject(failed.error);
        else resolve();
      };
      // the connection lost mid-answer: the query itself then never ends
      const lost = (error: unknown) => { failed ??= { error }; done(); };
      core.on('error', lost);
      core.query(sql, params)
        .on('result', (row) => {
          if (failed) return;
          try {
            onRow(row as Record<string, unknown>);
          } catch (error) {
            failed = { error };
          }
        })
        .on('error', (error) => { failed ??= { error }; })
        .on('end', done);
    }),
    end: () => conn.end(),
  };
}

/** The MySQL session statements the sync issues and what they become in SQLite (null: nothing to do). */
function translateSqlite(sql: string): string | null {
  const s = sql.trim();
  if (/^START TRANSACTION/i.test(s)) return 'BEGIN'; // a deferred read transaction: its snapshot is the first read's
  if (/^SET /i.test(s)) return null;
  return s;
}

/** `IN (?)` with an array: one placeholder per element (as mysql2 expands it). Integer text → numbers. */
function expand(sql: string, params: unknown[]): { sql: string; params: unknown[] } {
  let i = 0;
  const out: unknown[] = [];
  const text = sql.replace(/\?/g, () => {
    const p = params[i++];
    if (Array.isArray(p)) {
      out.push(...p.map(plain));
      return p.map(() => '?').join(',');
    }
    out.push(plain(p));
    return '?';
  });
  return { sql: text, params: out };
}
const plain = (v: unknown) => (typeof v === 'string' && /^-?\d{1,15}$/.test(v) ? Number(v) : typeof v === 'boolean' ? Number(v) : v);

async function openSqlite(path: string): Promise<SourceConnection> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path, { readonly: true, fileMustExist: true, timeout: 5_000 });
  return {
    dialect: 'sqlite',
    async query(sql, params = []) {
      const translated = translateSqlite(sql);
      if (translated === null) return [[]];
      if (/^COMMIT|^ROLLBACK/i.test(translated) && !db.inTransaction) return [[]];
      const { sql: text, params: values } = expand(translated, params);
      const stmt = db.prepare(text);
      return [stmt.reader ? stmt.all(...values) : (stmt.run(...values), [])];
    },
    async each(sql, params, onRow) {
      const { sql: text, params: values } = expand(sql, params);
      for (const row of db.prepare(text).iterate(...values)) onRow(row as Record<string, unknown>);
    },
    async end() {
      db.close();
    },
  };
}

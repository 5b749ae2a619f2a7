// A source database in the indexer's SQLite storage (test/fixtures/indexer-schema.sqlite.sql): a file in
// WAL mode, written by this process through better-sqlite3 (as the indexer writes it through go-sqlite3)
// while the sync reads it from its own process. Same writer (IndexerWriter, dialect 'sqlite') and rows
// as the MySQL fixture.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { WriterConn } from './indexer.js';

const schema = readFileSync(new URL('../fixtures/indexer-schema.sqlite.sql', import.meta.url), 'utf8');

export interface SqliteSource {
  path: string;
  url: string;
  conn: WriterConn & { query(sql: string, params?: unknown[]): Promise<[Record<string, unknown>[]]> };
  close(): Promise<void>;
}

export function createSqliteSource(): SqliteSource {
  const dir = mkdtempSync(join(tmpdir(), 'igw-sqlite-src-'));
  const path = join(dir, 'indexer.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.exec(schema);
  const conn: SqliteSource['conn'] = {
    async query(sql, params = []) {
      const stmt = db.prepare(sql);
      if (stmt.reader) return [stmt.all(...(params as unknown[])) as Record<string, unknown>[]];
      stmt.run(...(params as unknown[]));
      return [[]];
    },
    async beginTransaction() { db.exec('BEGIN IMMEDIATE'); },
    async commit() { db.exec('COMMIT'); },
    async rollback() { if (db.inTransaction) db.exec('ROLLBACK'); },
  };
  return {
    path, url: `sqlite://${path}`, conn,
    async close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

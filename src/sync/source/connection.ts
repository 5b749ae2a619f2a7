// Connections to the indexer's MySQL/MariaDB database (the source adapter: all MySQL-side SQL of the sync
// lives under src/sync/source). Sessions read in +00:00 so timestamps arrive as the wall-clock text the
// indexer wrote; the sync converts them from the declared zone. DECIMAL and BIGINT arrive as exact strings.
import mysql from 'mysql2/promise';

export interface SourceTarget {
  host: string; port: number; user: string; password: string; database: string;
}

/** mysql://user:pass@host:port/db → connection settings (the database is required). */
export function parseSourceUrl(url: string): SourceTarget {
  const u = new URL(url);
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') throw new Error('must be a mysql:// URL');
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database) throw new Error('must name the database (mysql://user:pass@host:port/db)');
  return {
    host: u.hostname || '127.0.0.1', port: u.port ? Number(u.port) : 3306,
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

export type SourceConnection = mysql.Connection;

export async function connectSource(target: SourceTarget): Promise<SourceConnection> {
  const conn = await mysql.createConnection(connectionOptions(target));
  await conn.query(`SET time_zone = '+00:00'`);
  return conn;
}

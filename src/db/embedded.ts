import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { createSql, type Sql } from './client.js';

export interface EmbeddedDatabase {
  /** Unix socket that postgres.js connects to, exactly as it would to a server. */
  socketPath: string;
  /** True when the data directory was created by this start (nothing migrated or seeded yet). */
  fresh: boolean;
  /**
   * NOTIFY payloads of a channel, committed in-process or by a writer() client. The engine has one session
   * for every connection, and a notification goes to the connection that committed it, never to a
   * postgres.js listen() connection: this is how the embedded engine's notifications are received.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<{ unlisten(): Promise<void> }>;
  /** A writable client whose commits' notifications reach listen(); the caller ends it. */
  writer(): Sql;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Directory kept between starts; undefined = in memory (tests). */
  dataDir?: string;
  /** Must be ≥ the postgres.js pool size, or a wider pool hangs. */
  maxConnections: number;
}

/**
 * Starts PGlite in this process and serves it over the PostgreSQL wire protocol on a private unix
 * socket, so the same postgres.js code talks to it as to a real server.
 */
export async function startEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  let fresh = true;
  let releaseLock = () => {};
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true });
    releaseLock = lockDataDir(options.dataDir);
    try {
      readFileSync(join(options.dataDir, 'PG_VERSION'));
      fresh = false;
    } catch {
      fresh = true;
    }
  }
  try {
    const db = options.dataDir ? new PGlite(options.dataDir) : new PGlite();
    await db.waitReady;
    const socketDir = mkdtempSync(join(tmpdir(), 'igw-pg-'));
    const socketPath = join(socketDir, '.s.PGSQL.5432');
    const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: options.maxConnections });
    await server.start();
    const notifications = createNotifications(db);
    return {
      socketPath,
      fresh,
      listen: notifications.listen,
      writer: () => createSql({
        socketPath, poolMax: 1, statementTimeoutMs: 600_000, connectTimeoutS: 10, readOnly: false, onNotify: notifications.dispatch,
      }),
      async stop() {
        await server.stop();
        await db.close();
        rmSync(socketDir, { recursive: true, force: true });
        releaseLock();
      },
    };
  } catch (error) {
    releaseLock();
    throw error;
  }
}

/** Listeners per channel; the first one of a channel LISTENs in the engine's one session. */
function createNotifications(db: PGlite) {
  const listeners = new Map<string, Set<(payload: string) => void>>();
  const dispatch = (channel: string, payload: string) => {
    for (const fn of listeners.get(channel) ?? []) fn(payload);
  };
  return {
    dispatch,
    async listen(channel: string, onPayload: (payload: string) => void) {
      let set = listeners.get(channel);
      if (!set) {
        listeners.set(channel, (set = new Set()));
        // in-process statements' notifications come through PGlite's own listener
        await db.listen(channel, (payload) => dispatch(channel, payload));
      }
      set.add(onPayload);
      return {
        async unlisten() {
          set.delete(onPayload);
        },
      };
    },
  };
}

// PGlite takes no lock on its directory: two processes on one directory would
// corrupt it, so a pid file refuses the second one while the first is alive.
function lockDataDir(dir: string): () => void {
  const lockPath = join(dir, '.gateway.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(`the embedded database in ${dir} is in use by process ${pid}`);
      }
      rmSync(lockPath, { force: true }); // stale lock of a process that is gone
    }
  }
  throw new Error(`cannot lock ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

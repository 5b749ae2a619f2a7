import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
import { freePort } from './ports.js';

// A private MariaDB server with a ROW binlog (the shared one on 3306 runs without): its own temporary
// data directory initialised by mariadb-install-db, its own loopback port, removed at the end (and at
// process exit, should a test die first). Null from `mariadbAvailable()` when the binaries are missing.

const run = promisify(execFile);
const mariadbd = '/usr/sbin/mariadbd';

export function mariadbAvailable(): boolean {
  return existsSync(mariadbd) && existsSync('/usr/bin/mariadb-install-db');
}

export interface MariaInstance {
  host: string;
  port: number;
  user: string;
  /** stops the server (SIGTERM; SIGKILL with `kill`), keeps the data directory */
  stop(kill?: boolean): Promise<void>;
  /** starts it again on the same port and data */
  start(): Promise<void>;
  /** stops it and removes the data directory */
  destroy(): Promise<void>;
}

/** `bufferPoolMb`: InnoDB buffer pool (32 MB for tests; the sync benchmark loads millions of rows). */
export async function startMariaInstance(serverId: number, options: { bufferPoolMb?: number } = {}): Promise<MariaInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'igw-mariadb-'));
  const port = await freePort();
  await run('mariadb-install-db', ['--no-defaults', `--datadir=${dir}/data`, '--user=root', '--auth-root-authentication-method=normal',
    '--skip-test-db'], { timeout: 120_000 });
  let child: ChildProcess | null = null;
  const cleanup = () => { child?.kill('SIGKILL'); rmSync(dir, { recursive: true, force: true }); };
  process.once('exit', cleanup);
  const start = async () => {
    child = spawn(mariadbd, ['--no-defaults', `--datadir=${dir}/data`, `--port=${port}`, '--bind-address=127.0.0.1',
      `--socket=${dir}/mysqld.sock`, `--pid-file=${dir}/mysqld.pid`, '--user=root', `--log-bin=${dir}/data/binlog`,
      '--binlog-format=ROW', `--server-id=${serverId}`, '--skip-name-resolve', `--innodb-buffer-pool-size=${options.bufferPoolMb ?? 32}M`,
      '--innodb-log-file-size=16M', '--skip-log-error', '--performance-schema=OFF'], { stdio: 'ignore' });
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const c = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root' });
        await c.end();
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  };
  const stop = async (kill = false) => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill(kill ? 'SIGKILL' : 'SIGTERM');
    await exited;
    child = null;
  };
  await start();
  return {
    host: '127.0.0.1', port, user: 'root', stop, start,
    async destroy() {
      await stop();
      process.off('exit', cleanup);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

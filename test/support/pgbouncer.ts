import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.js';

// A private PgBouncer in transaction pooling mode in front of a PostgreSQL server, for the pooler tests:
// its own ini in a temp dir, its own loopback port, trust auth, run in the foreground as a non-root user
// (the `postgres` OS user when the tests run as root) and stopped, directory removed, at the end.
// `pgbouncerBinary()` is null when PgBouncer is not installed; the tests are then skipped.

export function pgbouncerBinary(): string | null {
  for (const path of ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer']) if (existsSync(path)) return path;
  return null;
}

const answers = (port: number) => new Promise<boolean>((resolve) => {
  const socket = connect({ host: '127.0.0.1', port, timeout: 300 });
  socket.once('connect', () => { socket.destroy(); resolve(true); });
  socket.once('error', () => resolve(false));
  socket.once('timeout', () => { socket.destroy(); resolve(false); });
});

export interface PgBouncer {
  port: number;
  /** `databaseUrl` (a server URL) with its host and port replaced by the bouncer's. */
  urlFor(databaseUrl: string): string;
  log(): string;
  /** Rewrites the ini with `changes` and has the running bouncer reload it (SIGHUP), as an operator would. */
  reload(changes: Partial<Pick<PgBouncerOptions, 'poolMode' | 'poolSize'>>): Promise<void>;
  stop(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The server behind it. */
  serverPort: number;
  /** Startup parameters PgBouncer drops instead of refusing the connection. */
  ignoreStartupParameters?: string[];
  poolSize?: number;
  /** Default `transaction`. */
  poolMode?: 'session' | 'transaction';
}

export async function startPgBouncer(options: PgBouncerOptions): Promise<PgBouncer> {
  const binary = pgbouncerBinary();
  if (!binary) throw new Error('pgbouncer is not installed');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'igw-pgbouncer-'));
  const port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), '"postgres" ""\n');
  const writeIni = (settings: PgBouncerOptions) => writeFileSync(join(dir, 'pgbouncer.ini'), [
    '[databases]',
    `* = host=127.0.0.1 port=${settings.serverPort}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    'auth_type = trust',
    `auth_file = ${join(dir, 'userlist.txt')}`,
    `pool_mode = ${settings.poolMode ?? 'transaction'}`,
    `default_pool_size = ${settings.poolSize ?? 4}`,
    'max_client_conn = 500',
    ...(settings.ignoreStartupParameters ? [`ignore_startup_parameters = ${settings.ignoreStartupParameters.join(',')}`] : []),
    `logfile = ${join(dir, 'pgbouncer.log')}`,
    `pidfile = ${join(dir, 'pgbouncer.pid')}`,
    '',
  ].join('\n'));
  writeIni(options);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, file), uid, gid);
  }
  const ini = join(dir, 'pgbouncer.ini');
  const child: ChildProcess = asRoot
    ? spawn('runuser', ['-u', 'postgres', '--', binary, ini], { stdio: 'ignore' })
    : spawn(binary, [ini], { stdio: 'ignore' });
  const pidFile = join(dir, 'pgbouncer.pid');
  // the bouncer's own pid (under runuser it is a child of the spawned process)
  const bouncerPid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : undefined);
  const kill = () => {
    const pid = bouncerPid();
    try {
      if (pid) process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
    try {
      child.kill('SIGTERM');
    } catch {
      // already gone
    }
  };
  const cleanup = () => {
    kill();
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', cleanup);
  const started = Date.now();
  while (!(await answers(port))) {
    if (Date.now() - started > 10_000) {
      cleanup();
      throw new Error('pgbouncer did not start');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    log: () => (existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : ''),
    async reload(changes) {
      writeIni({ ...options, ...changes });
      const before = readFileSync(join(dir, 'pgbouncer.log'), 'utf8').length;
      process.kill(bouncerPid()!, 'SIGHUP');
      // the bouncer logs the settings it changed once it has read the file again
      for (let i = 0; i < 100 && readFileSync(join(dir, 'pgbouncer.log'), 'utf8').length === before; i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      process.removeListener('exit', cleanup);
      const exited = new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', () => resolve())));
      kill();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './ports.js';

// A private PostgreSQL server for fault tests that stop and start the database: its own data directory
// in a temp dir, its own loopback port, trust auth, torn down at the end (and at process exit, should a
// test die first). Built from the installed server binaries; `pgBinDir()` is null when there are none,
// and the tests that need an instance are then skipped.

const run = promisify(execFile);

/** bin/ of the installed PostgreSQL server (15 preferred), or null. */
export function pgBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')) && existsSync(join(root, v, 'bin', 'initdb')));
  const pick = versions.includes('15') ? '15' : versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!pick) return null;
  // the server refuses to run as root: as root it runs as the `postgres` OS user
  if (process.getuid?.() === 0 && !osUserExists('postgres')) return null;
  return join(root, pick, 'bin');
}

function osUserExists(name: string): boolean {
  try {
    execFileSync('id', ['-u', name], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export interface PgInstance {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** Where the server writes its log. */
  logFile: string;
  running: boolean;
  /** `pg_ctl start`; `settings` (`name=value`) apply to this start only, on top of the instance's own. */
  start(settings?: string[]): Promise<void>;
  /** `pg_ctl stop`: fast (clients disconnected, clean shutdown) by default. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server if running and removes its directory. */
  destroy(): Promise<void>;
}

export interface PgInstanceOptions {
  /** More server settings (`name=value`), e.g. `max_standby_streaming_delay=0`. */
  settings?: string[];
  /**
   * A streaming standby of this (running) instance instead of a new cluster: `pg_basebackup -R` of it
   * into the new directory, so the new server starts in recovery and follows it.
   */
  standbyOf?: PgInstance;
}

export async function createPgInstance(instanceOptions: PgInstanceOptions = {}): Promise<PgInstance> {
  const bin = pgBinDir();
  if (!bin) throw new Error('no PostgreSQL server binaries');
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'igw-pg-instance-'));
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  const exec = (tool: string, args: string[], timeoutMs = 30_000) => {
    const [file, argv] = command(tool, args);
    return run(file, argv, { timeout: timeoutMs, cwd: dir });
  };

  if (instanceOptions.standbyOf) {
    // initdb's pg_hba.conf lets 127.0.0.1 replicate with trust; -R writes primary_conninfo and standby.signal
    await exec('pg_basebackup', ['-h', '127.0.0.1', '-p', String(instanceOptions.standbyOf.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream', '--no-sync'], 60_000);
  } else {
    await exec('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
  }
  const options = [
    `-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c synchronous_commit=off',
    '-c full_page_writes=off', '-c max_connections=60', '-c shared_buffers=32MB', '-c wal_level=replica',
    ...(instanceOptions.settings ?? []).map((setting) => `-c ${setting}`),
  ].join(' ');

  const stopSync = () => {
    try {
      const [file, argv] = command('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      execFileSync(file, argv, { stdio: 'ignore', timeout: 10_000 });
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopSync);

  const instance: PgInstance = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    logFile: join(dir, 'server.log'),
    running: false,
    async start(settings = []) {
      const all = [options, ...settings.map((setting) => `-c ${setting}`)].join(' ');
      await exec('pg_ctl', ['-D', dataDir, '-l', join(dir, 'server.log'), '-o', all, '-w', '-t', '30', 'start'], 40_000);
      instance.running = true;
    },
    async stop(mode = 'fast') {
      await exec('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop'], 40_000);
      instance.running = false;
    },
    async destroy() {
      process.removeListener('exit', stopSync);
      if (instance.running) await instance.stop('immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return instance;
}

// The soak benchmark's subjects: a fresh PostgreSQL database seeded with the demo data (dropped at the
// end), the real gateway as a separate process (`npm start`'s command: the compiled build with its heap limit),
// and a sampler of that process's RSS every second from /proc/<pid>/status.
import { createWriteStream } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { rssMb } from './load.js';
import { freePort } from '../../test/support/ports.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface SoakDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates `igw_soak_<pid>_<random>` on the server of `adminUrl` and seeds it with the demo data. */
export async function createSeededDatabase(adminUrl: string): Promise<SoakDatabase> {
  const name = `igw_soak_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped = false;
  const db: SoakDatabase = {
    name,
    url: url.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
  try {
    // npm run db:seed, in its own process (its garbage is not the gateway's)
    const seed = spawn(process.execPath, ['--import', 'tsx', 'src/cli/seed.ts'], {
      cwd: root, env: { ...process.env, DATABASE_URL: db.url }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    seed.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
    seed.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
    const code = await new Promise<number | null>((resolve) => seed.once('exit', resolve));
    if (code !== 0) throw new Error(`seeding ${name} failed (exit ${code}):\n${output}`);
  } catch (error) {
    await db.drop();
    throw error;
  }
  return db;
}

export interface GatewayExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Seconds since the start of the measured run (null: before it began). */
  atSecond: number | null;
}

export interface SoakGateway {
  child: ChildProcess;
  pid: number;
  port: number;
  base: string;
  /** The last 64 KB of its stdout + stderr (an OOM report ends up here). */
  outputTail(): string;
  /** Set once the process has ended. */
  exit: GatewayExit | null;
  exited: Promise<GatewayExit>;
  /** SIGTERM, then SIGKILL after `timeoutMs`; resolves when the process is gone. */
  stop(timeoutMs?: number): Promise<void>;
  /** How stop() ended it: SIGTERM was enough (and the exit code then), or SIGKILL was needed. */
  shutdown: { killed: boolean; code: number | null; ms: number } | null;
}

/**
 * Starts the gateway on a free port of 127.0.0.1 against `databaseUrl` with its production defaults
 * (response cache on, every limit at its default) and `env` on top (`nodeArgs` before the script, e.g. --cpu-prof);
 * resolves once /readyz answers 200.
 */
/** What `npm start` runs (package.json), with the default heap limit; dist/ is built first by bench/soak.ts. */
export const gatewayArgv = ['--max-old-space-size=512', 'dist/main.js'];

export async function startGateway(
  databaseUrl: string, env: Record<string, string>, runStart: () => number | null, nodeArgs: string[] = [],
): Promise<SoakGateway> {
  const port = await freePort();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(DATABASE_URL|PORT|HOST|SEED|NODE_OPTIONS|VITEST.*|LOG_.*|DB_.*|GRAPHQL_.*|RPC_.*|CACHE.*|REDIS_URL|HTTP_.*|CORS_.*|HEAP_MAX_MB)$/.test(k)));
  const child = spawn(process.execPath, [...nodeArgs, ...gatewayArgv], {
    cwd: root,
    // MALLOC_ARENA_MAX as npm start sets it (it is not in gatewayArgv: glibc reads it from the environment)
    env: { ...inherited, MALLOC_ARENA_MAX: '2', DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), SEED: 'false', LOG_LEVEL: 'warn', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  // SOAK_GATEWAY_LOG=FILE: the gateway's whole output also goes to FILE (e.g. with --gateway-env LOG_LEVEL=info)
  const logFile = process.env.SOAK_GATEWAY_LOG ? createWriteStream(process.env.SOAK_GATEWAY_LOG) : null;
  const keep = (chunk: Buffer) => {
    logFile?.write(chunk);
    tail += chunk.toString();
    if (tail.length > 128 * 1024) tail = tail.slice(-64 * 1024);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const gateway: SoakGateway = {
    child,
    pid: child.pid!,
    port,
    base: `http://127.0.0.1:${port}`,
    outputTail: () => tail.slice(-64 * 1024),
    exit: null,
    exited: new Promise<GatewayExit>((resolve) => {
      child.once('exit', (code, signal) => {
        const start = runStart();
        gateway.exit = { code, signal, atSecond: start === null ? null : Math.round((performance.now() - start) / 100) / 10 };
        resolve(gateway.exit);
      });
    }),
    shutdown: null,
    async stop(timeoutMs = 15_000) {
      if (gateway.exit) return;
      const started = performance.now();
      let killed = false;
      child.kill('SIGTERM');
      const timer = setTimeout(() => {
        killed = true;
        child.kill('SIGKILL');
      }, timeoutMs);
      const exit = await gateway.exited;
      clearTimeout(timer);
      gateway.shutdown ??= { killed, code: exit.code, ms: Math.round(performance.now() - started) };
    },
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gateway.exit) throw new Error(`the gateway exited at start (code ${gateway.exit.code}):\n${gateway.outputTail()}`);
    if (Date.now() > deadline) {
      await gateway.stop();
      throw new Error(`the gateway did not become ready within 60 s:\n${gateway.outputTail()}`);
    }
    try {
      const res = await fetch(`${gateway.base}/readyz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return gateway;
}

/** RSS of `pid` every `everyMs` (MB, one decimal); a sample is null once the process is gone. */
export function sampleRssEverySecond(pid: number, everyMs = 1000) {
  const samples: (number | null)[] = [];
  const take = () => samples.push(rssMb(pid));
  take();
  const timer = setInterval(take, everyMs);
  return {
    samples,
    stop() {
      clearInterval(timer);
      const seen = samples.filter((v): v is number => v !== null).sort((a, b) => a - b);
      return {
        maxMb: seen.at(-1) ?? null,
        medianMb: seen.length ? seen[Math.floor((seen.length - 1) / 2)]! : null,
        samples,
      };
    },
  };
}

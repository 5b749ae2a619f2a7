// A server process for a benchmark: the gateway (the compiled dist/main.js, as `npm start` runs it, response
// cache off) or another
// node server (the PostGraphile peer), started on a free loopback port, waited for, and stopped. An interrupted
// benchmark takes its servers with it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/support/ports.js';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export interface ServerProcess {
  base: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** Polls `probe` until it answers true; fails early when the child has exited. */
export async function waitReady(base: string, child: ChildProcess | null, probe = readyz, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode}`);
    try {
      if (await probe(base)) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${base} was not ready within ${timeoutMs / 1000} s`);
}

async function readyz(base: string): Promise<boolean> {
  return (await fetch(`${base}/readyz`)).ok;
}

const running = new Set<ChildProcess>();
let handlersInstalled = false;

/** Starts `node <args>` in the repository root with PORT/HOST set; resolves once `probe` says it is ready. */
export async function startServer(opts: {
  label: string;
  args: string[];
  env: Record<string, string>;
  probe?: (base: string) => Promise<boolean>;
}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, opts.args, {
    cwd: repoRoot,
    env: { ...process.env, ...opts.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  running.add(child);
  let stopping = false;
  child.once('exit', (code, signal) => {
    running.delete(child);
    if (!stopping) console.error(`bench: ${opts.label} (pid ${child.pid}) exited during the run: code ${code}, signal ${signal}`);
  });
  if (!handlersInstalled) {
    handlersInstalled = true;
    for (const sig of ['SIGINT', 'SIGTERM'] as const) {
      process.once(sig, () => {
        for (const c of running) c.kill('SIGTERM');
        process.exit(130);
      });
    }
  }
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    stopping = true;
    if (child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  try {
    await waitReady(base, child, opts.probe);
  } catch (error) {
    await stop();
    throw error;
  }
  return { base, child, stop };
}

/** The gateway as the benchmarks run it: response cache off, warn-level logs, no demo data, no per-client byte budget. */
export function startGateway(opts: { databaseUrl: string; poolMax: number; cpuProfDir?: string; env?: Record<string, string> }): Promise<ServerProcess> {
  buildOnce();
  // what `npm start` runs: tsx's loader would measure its own transform (a name helper around every function)
  const args = ['--max-old-space-size=512'];
  if (opts.cpuProfDir) args.push('--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir);
  args.push('dist/main.js');
  return startServer({
    label: 'the gateway',
    args,
    env: {
      MALLOC_ARENA_MAX: '2', // as npm start sets it
      DATABASE_URL: opts.databaseUrl,
      LOG_LEVEL: 'warn',
      CACHE: 'off',
      DB_POOL_MAX: String(opts.poolMax),
      SEED: 'false',
      // the per-client byte budget (src/server/connections.ts, 4 MB/s by default) is for many clients; the
      // benchmark is one load generator on one address and would meet it (429s) on ~5 KB answers near 1,000 req/s
      HTTP_CLIENT_BYTES_PER_S: '0',
      ...opts.env,
    },
  });
}

let built = false;
/** dist/ from the current sources, once per benchmark process (`npm run build`). */
function buildOnce(): void {
  if (built) return;
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: repoRoot, stdio: 'inherit' });
  built = true;
}

/** The reply must be a success: HTTP 200, no JSON-RPC error, no GraphQL errors. */
export function checkReply(name: string, status: number, text: string): void {
  const body = JSON.parse(text) as { error?: unknown; errors?: unknown };
  if (status !== 200 || body.error || body.errors) throw new Error(`${name}: ${status} ${text.slice(0, 300)}`);
}

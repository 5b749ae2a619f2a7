import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { because, skipUnless } from '../support/skips.js';

// `npm start` under a supervisor (systemd, supervisord, a container runtime running npm): the supervisor
// signals npm's pid, not the gateway's. SIGTERM to npm must stop the gateway with its drain (npm forwards
// the signal to its child, which must be node itself, not a shell in between); and if npm dies without
// forwarding anything (SIGKILL), the gateway must not stay listening on its port without it. The real
// `npm start` (dist/, built by `npm test` before the suite), on a database of its own.

const root = fileURLToPath(new URL('../..', import.meta.url));
const onServer = (await findServer()) !== null;

interface Started {
  npm: ChildProcess;
  /** The gateway's pid (npm's child). */
  gatewayPid: number;
  base: string;
  output(): string;
}

async function npmStart(databaseUrl: string): Promise<Started> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(DATABASE_URL|PORT|HOST|SEED|NODE_OPTIONS|VITEST.*|LOG_.*|DB_.*|npm_.*)$/.test(k)));
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: root,
    env: { ...inherited, DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: '0', LOG_FORMAT: 'json', SEED: 'false' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  npm.stdout!.on('data', (c: Buffer) => { output += c.toString(); });
  npm.stderr!.on('data', (c: Buffer) => { output += c.toString(); });
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start: no start in 60 s:\n${output}`)), 60_000);
    npm.stdout!.on('data', () => {
      const m = /JSON-RPC v2:\s+(http:\/\/[\d.]+:\d+)\/v2\/rpc/.exec(output);
      if (m && /ready in/.test(output)) { clearTimeout(timer); resolve(m[1]!); }
    });
    npm.once('exit', (code) => { clearTimeout(timer); reject(new Error(`npm exited with ${code}:\n${output}`)); });
  });
  const children = readFileSync(`/proc/${npm.pid}/task/${npm.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  expect(children).toHaveLength(1);
  return { npm, gatewayPid: children[0]!, base, output: () => output };
}

/** npm's child is the gateway itself (`exec` in the start script), not a shell waiting for it. */
const command = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function gone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !alive(pid);
}

const refused = (base: string) => fetch(`${base}/healthz`).then(() => false, () => true);

describe('npm start under a supervisor', skipUnless(onServer, because.noServerForChild), () => {
  const db = useDatabase();
  const started: Started[] = [];

  beforeAll(async () => {
  });
  afterAll(async () => {
    // nothing left behind, whatever a failed assertion skipped
    for (const s of started) for (const pid of [s.gatewayPid, s.npm.pid!]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  });

  it('SIGTERM to npm\'s pid drains and stops the gateway; npm exits with it', async () => {
    const s = await npmStart(db.target.url!);
    started.push(s);
    expect(command(s.gatewayPid)).toContain('dist/main.js');
    expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
    const npmExit = new Promise<number | null>((resolve) => s.npm.once('exit', (code) => resolve(code)));
    s.npm.kill('SIGTERM');
    expect(await gone(s.gatewayPid, 15_000)).toBe(true);
    expect(await npmExit).toBe(0);
    expect(s.output()).toMatch(/SIGTERM: finishing in-flight requests/);
    expect(await refused(s.base)).toBe(true);
  }, 90_000);

  it('SIGKILL to npm (nothing forwarded): the gateway sees its parent gone, drains and exits', async () => {
    const s = await npmStart(db.target.url!);
    started.push(s);
    expect(command(s.gatewayPid)).toContain('dist/main.js');
    expect((await fetch(`${s.base}/healthz`)).status).toBe(200);
    s.npm.kill('SIGKILL');
    expect(await gone(s.gatewayPid, 15_000)).toBe(true);
    expect(s.output()).toMatch(/parent process gone: finishing in-flight requests/);
    expect(await refused(s.base)).toBe(true);
  }, 90_000);
});

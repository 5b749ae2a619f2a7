// Calibration: the scenarios' statements behind a plain node:http server (bench/plain-server.ts), loaded
// exactly like the gateway (autocannon, same concurrency and duration). It tells how much of the gap
// between the gateway and the floor any HTTP service in Node pays on this machine (a request parsed, a
// response written, both over loopback TCP, beside the load generator on the same 2 CPUs), and how much
// is the gateway's own (JSON-RPC, GraphQL, loaders, formatting).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Capture } from './floor.js';
import { cpuMs, runHttp, type Measurement } from './load.js';

export interface PlainResult {
  plain: Measurement;
  /** CPU time of the plain server per request (ms). */
  cpuMs: number | null;
}

export interface PlainRun {
  databaseUrl: string;
  poolMax: number;
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /** One entry per statement signature: a name, its capture and a request body (any JSON). */
  entries: { key: string; capture: Capture; body: string }[];
  log: (line: string) => void;
}

export async function measurePlain(run: PlainRun): Promise<Map<string, PlainResult>> {
  const out = new Map<string, PlainResult>();
  if (run.entries.length === 0) return out;
  const dir = mkdtempSync(join(tmpdir(), 'igw-plain-'));
  const file = join(dir, 'captures.json');
  writeFileSync(file, JSON.stringify(Object.fromEntries(run.entries.map((e, i) => [`/${i}`, e.capture]))));
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/plain-server.ts', file, run.databaseUrl, String(run.poolMax)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let text = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        text += chunk.toString();
        const match = /listening (\d+)/.exec(text);
        if (match) resolve(Number(match[1]));
      });
      child.once('exit', (code) => reject(new Error(`bench/plain-server.ts exited with code ${code}`)));
    });
    for (const [i, entry] of run.entries.entries()) {
      const url = `http://127.0.0.1:${port}/${i}`;
      if (run.warmupSeconds > 0) await runHttp({ url, body: entry.body, connections: run.connections, seconds: run.warmupSeconds });
      const before = child.pid ? cpuMs(child.pid) : null;
      const plain = await runHttp({ url, body: entry.body, connections: run.connections, seconds: run.seconds });
      const after = child.pid ? cpuMs(child.pid) : null;
      const cpu = before !== null && after !== null && plain.requests > 0 ? Math.round(((after - before) / plain.requests) * 1000) / 1000 : null;
      out.set(entry.key, { plain, cpuMs: cpu });
      run.log(`  plain server: ${entry.key.padEnd(36)} ${String(Math.round(plain.rps)).padStart(6)} req/s  p50 ${plain.p50.toFixed(2).padStart(7)}  ` +
        `p99 ${plain.p99.toFixed(2).padStart(7)} | cpu/req ${cpu ?? '?'}`);
    }
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

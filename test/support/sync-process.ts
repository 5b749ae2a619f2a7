import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The real sync process (`node --import tsx src/cli/sync.ts …`), for tests that kill it (-9) and restart it.

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface SyncProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** the metrics port, once the process has logged it */
  metricsPort(): Promise<number>;
  kill(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function startSyncProcess(args: string[]): SyncProcess {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(DATABASE_URL|SYNC_SOURCE_URL|NODE_OPTIONS|VITEST.*)$/.test(k)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/sync.ts', '--metrics-port', '0', ...args], {
    cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return {
    child, exited,
    output: () => output,
    async metricsPort() {
      for (let i = 0; i < 300; i++) {
        const m = /"port":(\d+),"msg":"metrics listening"/.exec(output);
        if (m) return Number(m[1]);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`no metrics port:\n${output}`);
    },
    async kill(signal = 'SIGKILL') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Polls `check` until it returns a truthy value (or throws after `ms`). */
export async function waitFor<T>(check: () => Promise<T | undefined | null | false>, ms = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * A sync suite's teardown, in the order that frees each part: the sync process first (it holds the source and
 * the read model), then the source database, the read model, the private MariaDB server. Parts never started
 * (a failed beforeAll) are skipped.
 */
export async function stopSyncSuite(parts: {
  sync?: SyncProcess | null;
  src?: { close(): Promise<unknown> } | null;
  db?: { close(): Promise<unknown> } | null;
  maria?: { destroy(): Promise<unknown> } | null;
}): Promise<void> {
  await parts.sync?.kill();
  await parts.src?.close();
  await parts.db?.close();
  await parts.maria?.destroy();
}

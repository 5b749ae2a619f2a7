import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// The real gateway process (`node --import tsx src/main.ts`), for tests about process behaviour: it
// keeps running through database faults, and it shuts down cleanly on SIGTERM.

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface GatewayProcess {
  child: ChildProcess;
  /** http://127.0.0.1:<port> */
  base: string;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or signal) whenever the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends SIGTERM and waits for the exit; SIGKILL after `timeoutMs`. */
  stop(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface ProcessOptions {
  /** More node flags before the entry point (e.g. a test-only `--import`). */
  nodeArgs?: string[];
  /** A shell command to run instead of node (e.g. the `start` script of package.json). */
  command?: string;
  /** The entry point: default the dev path (tsx on src/main.ts); a compiled `…/main.js` runs without tsx. */
  entry?: string;
}

export async function startGatewayProcess(env: Record<string, string>, startTimeoutMs = 30_000, options: ProcessOptions = {}): Promise<GatewayProcess> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) =>
    !/^(DATABASE_URL|PORT|HOST|SEED|NODE_OPTIONS|VITEST.*|LOG_.*|DB_.*|GRAPHQL_.*|RPC_.*|CACHE.*|REDIS_URL|HTTP_.*|CORS_.*|HEAP_MAX_MB)$/.test(k)));
  const [file, args] = options.command
    ? ['/bin/sh', ['-c', options.command.startsWith('exec ') ? options.command : `exec ${options.command}`]]
    : options.entry?.endsWith('.js')
      ? [process.execPath, [...(options.nodeArgs ?? []), options.entry]]
      : [process.execPath, ['--import', 'tsx', ...(options.nodeArgs ?? []), options.entry ?? 'src/main.ts']];
  const child = spawn(file, args, {
    cwd: root,
    env: { ...inherited, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: 'json', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  child.stderr!.on('data', (chunk: Buffer) => { output += chunk.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL'); // not left running behind a failed start
      reject(new Error(`gateway did not start in ${startTimeoutMs} ms:\n${output}`));
    }, startTimeoutMs);
    const look = () => {
      const match = /JSON-RPC v2:\s+(http:\/\/[\d.]+:\d+)\/v2\/rpc/.exec(output);
      if (match && /ready in/.test(output)) {
        clearTimeout(timer);
        child.stdout!.off('data', look);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', look);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited at start (code ${code}, signal ${signal}):\n${output}`));
    });
  });
  return {
    child,
    base,
    output: () => output,
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

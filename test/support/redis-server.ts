import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from './ports.js';

// A redis-server of the test's own on a free port, for fault tests: frozen with SIGSTOP (a real hung
// process: the port accepts, nothing answers), thawed with SIGCONT, killed and started again.

export interface OwnRedis {
  url: string;
  port: number;
  /** SIGSTOP: hung. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** SIGKILL; resolves once the process is gone. */
  kill(): Promise<void>;
  /** A new redis-server on the same port (after kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, timeout: 300 });
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (chunk) => { socket.destroy(); resolve(chunk.toString().startsWith('+PONG')); });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => { socket.destroy(); resolve(false); });
  });
}

export async function startRedis(port?: number): Promise<OwnRedis> {
  const p = port ?? await freePort();
  let child: ChildProcess;
  const launch = async () => {
    child = spawn('redis-server', ['--port', String(p), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      if (await pong(p)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not start on port ${p}`);
  };
  const kill = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await gone;
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${p}`,
    port: p,
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    kill,
    restart: launch,
    async stop() {
      child.kill('SIGCONT');
      await kill();
    },
  };
}

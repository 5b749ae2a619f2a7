import { spawn, type SendHandle } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { openSockets } from './http.js';

// Node 20 (libuv 1.46) accepts one connection per event-loop turn per listening handle: while clients reconnect
// faster than the loop turns, the kernel's accept queue stays full and a new client waits behind all of it
// (bench/accept-rate.ts). More handles on the same listening socket accept as many per turn. Node 20 has no
// SO_REUSEPORT, so the extra handles are duplicates of the socket's descriptor: the listening handle is sent to a
// short-lived child process over IPC, which sends it straight back (descriptors travel as SCM_RIGHTS, arriving
// as new ones), and each duplicate hands its connections to the listener as its own. The raw handle is sent,
// not the server: a child sent a server listens on it, and would take (then drop) connections until it exits.

/** A child that returns every handle it is sent (it is killed once they are back). */
const relay = "process.on('message', (m, h) => process.send(m, h));";

export interface AcceptHandles {
  /** Handles listening in all, the server's own included. */
  readonly count: number;
  /** Stops the extra handles accepting (the shutdown calls it before closing the server). */
  close(): void;
}

/**
 * Gives a listening `server` `count - 1` more handles on its socket; their connections are emitted on
 * `server` as 'connection', so its limits and tracking see every connection. Resolves with 1 handle (the
 * server's own) when duplicates cannot be had within `timeoutMs` (no IPC, a platform without descriptor passing).
 */
export async function addAcceptHandles(server: Server, count: number, timeoutMs = 5_000): Promise<AcceptHandles> {
  const extra: Server[] = [];
  const result = (): AcceptHandles => ({
    count: 1 + extra.length,
    close: () => {
      for (const handle of extra) handle.close();
    },
  });
  if (count <= 1 || !server.listening) return result();
  const child = spawn(process.execPath, ['-e', relay], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: {} });
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      child.removeAllListeners();
      child.on('error', () => {}); // (a kill that fails: the child has gone already)
      if (child.exitCode === null) child.kill();
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    child.on('error', done);
    child.on('exit', done);
    child.on('message', (_message, handle) => {
      if (!handle) return;
      // the listener counts and bounds every connection ('connection' listeners of src/server/connections.ts)
      // Node's bound on sockets (server.maxConnections) counts each handle's own: the sum over all of them
      // is held to it here, a socket over it closed on accept as Node closes one over its own
      const duplicate = createServer((socket: Socket) => {
        if (openSockets(server) >= server.maxConnections) return void socket.destroy();
        server.emit('connection', socket);
      });
      duplicate.on('error', () => {});
      duplicate.listen(handle as Parameters<Server['listen']>[0]);
      extra.push(duplicate);
      if (extra.length === count - 1) done();
    });
    // the TCP handle itself (net.Native to child_process): Node's types list only sockets and servers
    const raw = (server as unknown as { _handle: SendHandle })._handle;
    for (let i = 0; i < count - 1; i++) child.send({ i }, raw);
  });
  return result();
}

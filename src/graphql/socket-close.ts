import type { Socket } from 'node:net';

// Work to end when a connection closes, one 'close' listener per socket: a response pipelined behind another
// never hears its client leave (Node emits no 'close' for it).

const pending = new WeakMap<Socket, Set<() => void>>();

/** Calls `fn` once `socket` closes (at once if it has); returns what cancels that. */
export function onSocketClose(socket: Socket | undefined, fn: () => void): () => void {
  if (!socket) return () => {};
  if (socket.destroyed) {
    fn();
    return () => {};
  }
  let set = pending.get(socket);
  if (!set) {
    const fns = set = new Set();
    pending.set(socket, fns);
    socket.once('close', () => {
      pending.delete(socket);
      for (const f of fns) f();
    });
  }
  set.add(fn);
  return () => set.delete(fn);
}

import type { Socket } from 'node:net';

// Refused and cut connections are answered at once but closed only after a while: a client that reconnects
// the moment its connection closes (what a reconnecting attacker does) then waits that long, instead of
// costing an accept, a parse and an answer every few milliseconds, and the kernel's accept queue stays short
// for everyone else. The answer says `connection: close`, so an HTTP client reads it and closes at once: it
// never waits. Bounded in count (HTTP_MAX_HELD_CONNECTIONS, outside HTTP_MAX_CONNECTIONS); past it a
// connection is closed as soon as its answer is written, as before. A held connection costs about 3 KB of
// heap (7,744 held: +24 MB).

export interface HeldConnections {
  /**
   * Ends `socket` with `end` (which ends the response or the socket) after the hold time, or now when the bound
   * is reached; either way a client that does not take its answer is destroyed a second after the end. True
   * when held.
   */
  endLater(socket: Socket, end: () => void): boolean;
  /** Connections held now. */
  count(): number;
  /** Ends every hold now (shutdown: a held connection has nothing left to finish). */
  closeAll(): void;
}

export function heldConnections(settings: {
  max: number;
  ms: number;
  /** Called as a connection is held: it leaves the connection table (its place is for a connection that works). */
  release?: (socket: Socket) => void;
}): HeldConnections {
  const held = new Map<Socket, { timer: NodeJS.Timeout; close: () => void }>();
  const closer = (socket: Socket, end: () => void) => () => {
    end();
    setTimeout(() => socket.destroy(), 1_000).unref();
  };
  let closing = false;
  const release = (socket: Socket) => {
    const entry = held.get(socket);
    if (!entry) return;
    held.delete(socket);
    clearTimeout(entry.timer);
    entry.close();
  };
  return {
    endLater(socket, end) {
      const close = closer(socket, end);
      if (closing || held.size >= settings.max || settings.ms === 0 || socket.destroyed) {
        close();
        return false;
      }
      const timer = setTimeout(() => release(socket), settings.ms);
      timer.unref();
      held.set(socket, { timer, close });
      settings.release?.(socket);
      // the idle timeout (HTTP_IDLE_TIMEOUT_MS) would close a silent one sooner; this timer is its deadline now
      socket.setTimeout(0);
      socket.once('close', () => {
        const entry = held.get(socket);
        if (entry) clearTimeout(entry.timer);
        held.delete(socket);
      });
      return true;
    },
    count: () => held.size,
    closeAll() {
      closing = true;
      for (const socket of [...held.keys()]) release(socket);
    },
  };
}

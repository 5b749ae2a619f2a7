import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// The connection table under pressure. Node closes a connection over HTTP_MAX_CONNECTIONS on accept, so an
// attacker that keeps the table full (slow bodies from many addresses, each reopened as soon as it is cut)
// keeps every new client out. Here the table is kept from filling: once the open connections pass the
// pressure threshold (HTTP_PRESSURE_THRESHOLD_PERCENT of HTTP_MAX_CONNECTIONS), each new connection makes
// room by cutting an older one, chosen in this order:
//   1. a connection that has not completed a request: still sending its first headers, or a body (oldest first);
//   2. an idle kept-alive connection (no request in flight; longest idle first).
// A connection whose request is complete (its answer or a stream being written) is never cut here. And
// while under pressure the headers and body deadlines shrink to HTTP_PRESSURE_TIMEOUT_MS, so slow
// connections are cut even without new arrivals. A probe's connection sends its request at once: by the
// time it could be the oldest incomplete one its request is complete.
//
// Whatever the pressure, an address holds at most `maxIncompletePerClient` incomplete connections: one more
// waits, accepted but unread, until one of its address's incomplete connections completes or closes (or
// Node's headers timeout ends it). A reconnecting attacker's surplus then sits in the waiting room instead
// of being closed and reopened in a loop, which would cost the event loop an accept, a parse and an answer
// each time; a client that merely opened many connections at once is served a moment later.

export interface PressureSettings {
  maxConnections: number;
  /** Percent of maxConnections above which room is made (100: never). */
  thresholdPercent: number;
  /** Headers and body deadline while above the threshold (ms). */
  timeoutMs: number;
  /** The client address a socket is counted under (connections.ts' clientKey); none: no per-address rule. */
  keyOf?: (socket: Socket) => string | undefined;
  /** Incomplete connections one address may hold; more wait unread (0: no limit). */
  maxIncompletePerClient?: number;
  /** Connections waiting in all; past it a new one over its address's limit is closed on accept. */
  maxWaiting?: number;
}

/** At most this many connections cut per sweep: a cohort that passes its deadline together is cut over several ticks, not in one long turn of the event loop. */
export const cutsPerSweep = 64;

type State = 'incomplete' | 'busy' | 'idle';

interface Entry {
  state: State;
  /** Since when it is in this state (performance.now()). */
  since: number;
  /** The request whose body is arriving, if any (cut with an answer of its surface). */
  receiving?: { req: IncomingMessage; res: ServerResponse; path: string };
  inFlight: number;
}

export interface PressureHooks {
  /** Ends a request whose body is still arriving (408 with a body of its surface; the connection closes). */
  cut(req: IncomingMessage, res: ServerResponse, path: string, reason: string): void;
}

export interface ConnectionTable {
  /** A connection was accepted: admitted, made to wait (it must not be read yet), or closed. */
  opened(socket: Socket): 'admitted' | 'waiting' | 'closed';
  /** Whether the connection is still waiting for its address's turn (not to be read). */
  waiting(socket: Socket): boolean;
  /** A request arrived on it (its headers are in). */
  request(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** Cuts slow incomplete connections while under pressure (called from the listener's periodic check). */
  sweep(): void;
  /** Open connections and how many were cut to make room (for metrics and tests). */
  stats(): { open: number; cut: number; refused: number; waiting: number; underPressure: boolean };
}

export function connectionTable(settings: PressureSettings, hooks: PressureHooks, now: () => number = () => performance.now()): ConnectionTable {
  const threshold = Math.floor((settings.maxConnections * settings.thresholdPercent) / 100);
  // insertion order = age: a socket that changes state is re-inserted, so each map is oldest first
  const incomplete = new Map<Socket, Entry>();
  const idle = new Map<Socket, Entry>();
  const entries = new Map<Socket, Entry>();
  const incompleteByKey = new Map<string, number>();
  const keys = new WeakMap<Socket, string>();
  let cutCount = 0;
  let refusedCount = 0;
  const perClient = settings.maxIncompletePerClient ?? 0;
  const maxWaiting = settings.maxWaiting ?? settings.maxConnections;
  // per address, oldest first; a waiting socket is in no other map
  const waitingByKey = new Map<string, Set<Socket>>();
  let waitingCount = 0;

  /** Keeps the per-address count of incomplete connections as a socket enters or leaves that state. */
  const countIncomplete = (socket: Socket, delta: 1 | -1) => {
    const key = keys.get(socket);
    if (key === undefined) return;
    const n = (incompleteByKey.get(key) ?? 0) + delta;
    if (n > 0) incompleteByKey.set(key, n);
    else incompleteByKey.delete(key);
  };
  const leaveIncomplete = (socket: Socket) => {
    if (!incomplete.delete(socket)) return;
    countIncomplete(socket, -1);
    const key = keys.get(socket);
    if (key !== undefined && waitingByKey.has(key)) queueMicrotask(() => promote(key));
  };

  const move = (socket: Socket, entry: Entry, state: State) => {
    leaveIncomplete(socket);
    idle.delete(socket);
    entry.state = state;
    entry.since = now();
    if (state === 'incomplete') {
      incomplete.set(socket, entry);
      countIncomplete(socket, 1);
    }
    else if (state === 'idle') idle.set(socket, entry);
  };

  const cut = (socket: Socket, entry: Entry, reason: string) => {
    leaveIncomplete(socket);
    idle.delete(socket);
    entries.delete(socket);
    cutCount++;
    const receiving = entry.receiving;
    if (receiving && !receiving.req.complete && !receiving.res.headersSent) {
      hooks.cut(receiving.req, receiving.res, receiving.path, reason);
      // the slot must come free now, not when the client has read the answer
      const timer = setTimeout(() => socket.destroy(), 1_000);
      timer.unref();
      receiving.res.once('finish', () => { clearTimeout(timer); socket.destroy(); });
    } else {
      socket.destroy();
    }
  };

  /** Cuts one connection other than `newcomer` to make room: an incomplete one first, else an idle one. */
  const makeRoom = (newcomer: Socket) => {
    const first = incomplete.entries().next();
    if (!first.done && first.value[0] !== newcomer) return cut(first.value[0], first.value[1], 'connection table nearly full: request not completed in time');
    const oldIdle = idle.entries().next();
    if (!oldIdle.done) cut(oldIdle.value[0], oldIdle.value[1], 'connection table nearly full');
  };

  // at the threshold already: arrivals keep the table there by cutting, so this is where the deadlines shrink
  const underPressure = () => entries.size >= threshold && threshold < settings.maxConnections;

  /** Enters a connection in the table (making room for it past the threshold); false if the table is full. */
  const admit = (socket: Socket): boolean => {
    while (threshold < settings.maxConnections && entries.size >= threshold && (incomplete.size > 0 || idle.size > 0)) {
      const before = entries.size;
      makeRoom(socket);
      if (entries.size === before) break;
    }
    if (entries.size >= settings.maxConnections) {
      refusedCount++;
      socket.destroy();
      return false;
    }
    const entry: Entry = { state: 'incomplete', since: now(), inFlight: 0 };
    entries.set(socket, entry);
    incomplete.set(socket, entry);
    countIncomplete(socket, 1);
    socket.once('close', () => {
      entries.delete(socket);
      leaveIncomplete(socket);
      idle.delete(socket);
    });
    return true;
  };

  const leaveWaiting = (key: string, socket: Socket): boolean => {
    const queue = waitingByKey.get(key);
    if (!queue?.delete(socket)) return false;
    waitingCount--;
    if (queue.size === 0) waitingByKey.delete(key);
    return true;
  };

  /** Lets the address's oldest waiting connections in while it is under its limit; they are read from now on. */
  const promote = (key: string) => {
    for (const socket of waitingByKey.get(key) ?? []) {
      if ((incompleteByKey.get(key) ?? 0) >= perClient) return;
      leaveWaiting(key, socket);
      if (socket.destroyed) continue;
      if (admit(socket)) socket.resume();
    }
  };

  return {
    opened(socket) {
      const key = settings.keyOf?.(socket);
      if (key !== undefined) keys.set(socket, key);
      if (key !== undefined && perClient > 0 && (incompleteByKey.get(key) ?? 0) >= perClient) {
        if (waitingCount >= maxWaiting) {
          refusedCount++;
          socket.destroy();
          return 'closed';
        }
        let queue = waitingByKey.get(key);
        if (!queue) waitingByKey.set(key, (queue = new Set()));
        queue.add(socket);
        waitingCount++;
        socket.once('close', () => leaveWaiting(key, socket));
        return 'waiting';
      }
      return admit(socket) ? 'admitted' : 'closed';
    },
    waiting: (socket) => {
      const key = keys.get(socket);
      return key !== undefined && (waitingByKey.get(key)?.has(socket) ?? false);
    },
    request(req, res, path) {
      const socket = req.socket;
      const entry = entries.get(socket);
      if (!entry) return;
      entry.inFlight++;
      const completed = () => {
        entry.receiving = undefined;
        if (entries.get(socket) === entry && entry.state === 'incomplete') move(socket, entry, 'busy');
      };
      if (req.complete) {
        move(socket, entry, 'busy');
      } else {
        entry.receiving = { req, res, path };
        // a request that arrives with its body still to come is incomplete until the body is in
        if (entry.state !== 'incomplete') move(socket, entry, 'incomplete');
        req.once('end', completed);
      }
      res.once('close', () => {
        entry.inFlight--;
        if (entries.get(socket) === entry && entry.inFlight === 0) {
          entry.receiving = undefined;
          move(socket, entry, 'idle');
        }
      });
    },
    sweep() {
      if (!underPressure()) return;
      const oldest = now() - settings.timeoutMs;
      let budget = cutsPerSweep;
      for (const [socket, entry] of incomplete) {
        if (entry.since > oldest || budget-- === 0) break; // oldest first: the rest are younger
        cut(socket, entry, `connection table nearly full: request not completed within ${settings.timeoutMs} ms`);
      }
    },
    stats: () => ({ open: entries.size, cut: cutCount, refused: refusedCount, waiting: waitingCount, underPressure: underPressure() }),
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// The connection table kept from filling, since Node refuses every new client once it is full: past
// HTTP_PRESSURE_THRESHOLD_PERCENT each new connection cuts the oldest one with an incomplete request (else the
// longest idle one), never one whose request is complete, and deadlines shrink to HTTP_PRESSURE_TIMEOUT_MS.
// Whatever the pressure, an address holds at most `maxIncompletePerClient` incomplete connections; one more
// waits, accepted but unread, for one of them to complete or close: a reconnecting attacker's surplus then
// waits instead of being closed and reopened in a loop, each accept, parse and answer costing the event loop.

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

/** At most this many connections cut per sweep: a cohort past its deadline together is cut over several ticks. */
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
  /** Ends a request whose body is still arriving: 408 with a body of its surface, and the connection closed or held (held.ts). */
  cut(req: IncomingMessage, res: ServerResponse, path: string, reason: string): void;
}

export interface ConnectionTable {
  /** A connection was accepted: admitted, made to wait (it must not be read yet), or closed. */
  opened(socket: Socket): 'admitted' | 'waiting' | 'closed';
  /** Whether the connection is still waiting for its address's turn (not to be read). */
  waiting(socket: Socket): boolean;
  /** A request arrived on it (its headers are in). */
  request(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** Takes a connection out of the table while it stays open: answered and held before it closes (held.ts). */
  release(socket: Socket): void;
  /** Cuts slow incomplete connections while under pressure (called from the listener's periodic check). */
  sweep(): void;
  /** Open connections and how many were cut to make room (for metrics and tests). */
  stats(): { open: number; cut: number; refused: number; waiting: number; underPressure: boolean };
}

export function connectionTable(settings: PressureSettings, hooks: PressureHooks, now: () => number = () => performance.now()): ConnectionTable {
  return new PressureTable(settings, hooks, now);
}

class PressureTable implements ConnectionTable {
  private readonly threshold: number;
  // insertion order = age: a socket that changes state is re-inserted, so each map is oldest first
  private readonly incomplete = new Map<Socket, Entry>();
  private readonly idle = new Map<Socket, Entry>();
  private readonly entries = new Map<Socket, Entry>();
  private readonly incompleteByKey = new Map<string, number>();
  private readonly keys = new WeakMap<Socket, string>();
  private cutCount = 0;
  private refusedCount = 0;
  // per address, oldest first; a waiting socket is in no other map
  private readonly waitingByKey = new Map<string, Set<Socket>>();
  private waitingCount = 0;
  private readonly promotable = new Set<string>();

  constructor(private readonly settings: PressureSettings, private readonly hooks: PressureHooks, private readonly now: () => number) {
    this.threshold = Math.floor((settings.maxConnections * settings.thresholdPercent) / 100);
  }

  /** Keeps the per-address count of incomplete connections as a socket enters or leaves that state. */
  private countIncomplete(socket: Socket, delta: 1 | -1): void {
    const key = this.keys.get(socket);
    if (key === undefined) return;
    const n = (this.incompleteByKey.get(key) ?? 0) + delta;
    if (n > 0) this.incompleteByKey.set(key, n);
    else this.incompleteByKey.delete(key);
  }

  private leaveIncomplete(socket: Socket): void {
    if (!this.incomplete.delete(socket)) return;
    this.countIncomplete(socket, -1);
    const key = this.keys.get(socket);
    if (key === undefined || !this.waitingByKey.has(key)) return;
    // on the next turn, in one batch: never a chain of promotions inside the event that freed the slot
    if (this.promotable.size === 0) setImmediate(() => this.promoteWaiting());
    this.promotable.add(key);
  }

  private move(socket: Socket, entry: Entry, state: State): void {
    this.leaveIncomplete(socket);
    this.idle.delete(socket);
    entry.state = state;
    entry.since = this.now();
    if (state === 'incomplete') {
      this.incomplete.set(socket, entry);
      this.countIncomplete(socket, 1);
    }
    else if (state === 'idle') this.idle.set(socket, entry);
  }

  private cut(socket: Socket, entry: Entry, reason: string): void {
    this.leaveIncomplete(socket);
    this.idle.delete(socket);
    this.entries.delete(socket);
    this.cutCount++;
    const receiving = entry.receiving;
    if (receiving && !receiving.req.complete && !receiving.res.headersSent) {
      // out of the table now; the hook answers it and closes it, at once or after holding it (src/server/held.ts)
      this.hooks.cut(receiving.req, receiving.res, receiving.path, reason);
    } else {
      socket.destroy();
    }
  }

  /** Cuts one connection other than `newcomer` to make room: an incomplete one first, else an idle one. */
  private makeRoom(newcomer: Socket): void {
    const first = this.incomplete.entries().next();
    if (!first.done && first.value[0] !== newcomer) return this.cut(first.value[0], first.value[1], 'connection table nearly full: request not completed in time');
    const oldIdle = this.idle.entries().next();
    if (!oldIdle.done) this.cut(oldIdle.value[0], oldIdle.value[1], 'connection table nearly full');
  }

  // at the threshold already: arrivals keep the table there by cutting, so this is where the deadlines shrink
  private underPressure(): boolean {
    return this.entries.size >= this.threshold && this.threshold < this.settings.maxConnections;
  }

  opened(socket: Socket): 'admitted' | 'waiting' | 'closed' {
    const key = this.settings.keyOf?.(socket);
    if (key === undefined) return this.admit(socket) ? 'admitted' : 'closed';
    this.keys.set(socket, key);
    const perClient = this.settings.maxIncompletePerClient ?? 0;
    if (perClient === 0 || (this.incompleteByKey.get(key) ?? 0) < perClient) return this.admit(socket) ? 'admitted' : 'closed';
    if (this.waitingCount >= (this.settings.maxWaiting ?? this.settings.maxConnections)) {
      this.refusedCount++;
      socket.destroy();
      return 'closed';
    }
    let queue = this.waitingByKey.get(key);
    if (!queue) this.waitingByKey.set(key, (queue = new Set()));
    queue.add(socket);
    this.waitingCount++;
    socket.once('close', () => this.leaveWaiting(key, socket));
    return 'waiting';
  }

  waiting(socket: Socket): boolean {
    const key = this.keys.get(socket);
    return key !== undefined && (this.waitingByKey.get(key)?.has(socket) ?? false);
  }

  /** Enters a connection in the table (making room for it past the threshold); false if the table is full. */
  private admit(socket: Socket, makeRoom = true): boolean {
    while (makeRoom && this.underPressure() && (this.incomplete.size > 0 || this.idle.size > 0)) {
      const before = this.entries.size;
      this.makeRoom(socket);
      if (this.entries.size === before) break;
    }
    if (this.entries.size >= this.settings.maxConnections) {
      this.refusedCount++;
      socket.destroy();
      return false;
    }
    const entry: Entry = { state: 'incomplete', since: this.now(), inFlight: 0 };
    this.entries.set(socket, entry);
    this.incomplete.set(socket, entry);
    this.countIncomplete(socket, 1);
    socket.once('close', () => {
      this.entries.delete(socket);
      this.leaveIncomplete(socket);
      this.idle.delete(socket);
    });
    return true;
  }

  private leaveWaiting(key: string, socket: Socket): void {
    const queue = this.waitingByKey.get(key);
    if (!queue?.delete(socket)) return;
    this.waitingCount--;
    if (queue.size === 0) this.waitingByKey.delete(key);
  }

  /**
   * Lets each freed address's oldest waiting connections in while it is under its limit; they are read from
   * now on. Not under pressure: a waiting connection never cuts another to get in (each cut would free a
   * slot for another promotion, a chain through the whole waiting room); it waits for the table to drain.
   */
  private promoteWaiting(): void {
    const perClient = this.settings.maxIncompletePerClient ?? 0;
    const keys = [...this.promotable];
    this.promotable.clear();
    for (const key of keys) {
      for (const socket of this.waitingByKey.get(key) ?? []) {
        if (this.underPressure() || (this.incompleteByKey.get(key) ?? 0) >= perClient) break;
        this.leaveWaiting(key, socket);
        if (!socket.destroyed && this.admit(socket, false)) socket.resume();
      }
    }
  }

  request(req: IncomingMessage, res: ServerResponse, path: string): void {
    const socket = req.socket;
    const entry = this.entries.get(socket);
    if (!entry) return;
    entry.inFlight++;
    const completed = () => {
      entry.receiving = undefined;
      if (this.entries.get(socket) === entry && entry.state === 'incomplete') this.move(socket, entry, 'busy');
    };
    if (req.complete) {
      this.move(socket, entry, 'busy');
    } else {
      entry.receiving = { req, res, path };
      // a request that arrives with its body still to come is incomplete until the body is in
      if (entry.state !== 'incomplete') this.move(socket, entry, 'incomplete');
      req.once('end', completed);
    }
    res.once('close', () => {
      entry.inFlight--;
      if (this.entries.get(socket) === entry && entry.inFlight === 0) {
        entry.receiving = undefined;
        this.move(socket, entry, 'idle');
      }
    });
  }

  release(socket: Socket): void {
    if (!this.entries.delete(socket)) return;
    this.leaveIncomplete(socket);
    this.idle.delete(socket);
  }

  sweep(): void {
    if (!this.underPressure()) return;
    const oldest = this.now() - this.settings.timeoutMs;
    let budget = cutsPerSweep;
    for (const [socket, entry] of this.incomplete) {
      if (entry.since > oldest || budget-- === 0) break; // oldest first: the rest are younger
      this.cut(socket, entry, `connection table nearly full: request not completed within ${this.settings.timeoutMs} ms`);
    }
  }

  stats() {
    return { open: this.entries.size, cut: this.cutCount, refused: this.refusedCount, waiting: this.waitingCount, underPressure: this.underPressure() };
  }
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

// The connection table kept from filling, since Node refuses every new client once it is full: past
// HTTP_PRESSURE_THRESHOLD_PERCENT each new connection cuts the oldest one with an incomplete request (else the
// longest idle one), never one whose request is complete, and deadlines shrink to HTTP_PRESSURE_TIMEOUT_MS.

export interface PressureSettings {
  maxConnections: number;
  /** Percent of maxConnections above which room is made (100: never). */
  thresholdPercent: number;
  /** Headers and body deadline while above the threshold (ms). */
  timeoutMs: number;
  /** The client address a socket is counted under (connections.ts' clientKey); none: no per-address rule. */
  keyOf?: (socket: Socket) => string | undefined;
}

/**
 * Under pressure, a new connection from an address that already holds this many incomplete ones is closed
 * on accept (the cheapest answer: no request parsed, nobody else cut): a reconnecting attacker then churns
 * against itself, while a newcomer from any other address is let in and makes room.
 */
export const incompletePerClientUnderPressure = 8;

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
  /** A connection was accepted. */
  opened(socket: Socket): void;
  /** A request arrived on it (its headers are in). */
  request(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** Cuts slow incomplete connections while under pressure (called from the listener's periodic check). */
  sweep(): void;
  /** Open connections and how many were cut to make room (for metrics and tests). */
  stats(): { open: number; cut: number; refused: number; underPressure: boolean };
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
    if (this.incomplete.delete(socket)) this.countIncomplete(socket, -1);
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
      this.hooks.cut(receiving.req, receiving.res, receiving.path, reason);
      // the slot must come free now, not when the client has read the answer
      const timer = setTimeout(() => socket.destroy(), 1_000);
      timer.unref();
      receiving.res.once('finish', () => { clearTimeout(timer); socket.destroy(); });
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

  opened(socket: Socket): void {
    const key = this.settings.keyOf?.(socket);
    if (key !== undefined && this.underPressure() && (this.incompleteByKey.get(key) ?? 0) >= incompletePerClientUnderPressure) {
      this.refusedCount++;
      return void socket.destroy();
    }
    if (key !== undefined) this.keys.set(socket, key);
    const entry: Entry = { state: 'incomplete', since: this.now(), inFlight: 0 };
    this.entries.set(socket, entry);
    this.incomplete.set(socket, entry);
    this.countIncomplete(socket, 1);
    socket.once('close', () => {
      this.entries.delete(socket);
      this.leaveIncomplete(socket);
      this.idle.delete(socket);
    });
    // the new one is the youngest: the oldest incomplete (or idle) one makes room for it
    while (this.entries.size > this.threshold && (this.incomplete.size > 1 || this.idle.size > 0)) {
      const before = this.entries.size;
      this.makeRoom(socket);
      if (this.entries.size === before) break;
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

  sweep(): void {
    if (!this.underPressure()) return;
    const oldest = this.now() - this.settings.timeoutMs;
    for (const [socket, entry] of this.incomplete) {
      if (entry.since > oldest) break; // oldest first: the rest are younger
      this.cut(socket, entry, `connection table nearly full: request not completed within ${this.settings.timeoutMs} ms`);
    }
  }

  stats() {
    return { open: this.entries.size, cut: this.cutCount, refused: this.refusedCount, underPressure: this.underPressure() };
  }
}

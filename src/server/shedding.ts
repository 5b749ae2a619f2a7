import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { clientKey } from './connections.js';

// Load shedding by cost, so that cheap clients keep their latency however many addresses the expensive ones
// come from: each address's recent cost is kept twice, in answer bytes and in new connections, and while the
// server is under pressure the addresses that cost the most are refused first, never one below its floor.
// Pressure: the event loop late (SHED_EVENT_LOOP_LAG_MS), or the sum over all addresses past its rate
// (SHED_TOTAL_BYTES_PER_S of answers, SHED_NEW_CONNECTIONS_PER_S of accepted connections).

export interface SheddingSettings {
  /** Event loop delay (ms) above which the most expensive clients are refused; 0: off. */
  lagMs: number;
  /** Recent answer bytes below which a client is never refused. */
  minBytes: number;
  /** Answer bytes per second summed over every client past which the most expensive are refused; 0: no such bound. */
  totalBytesPerS?: number;
  /**
   * New connections per second summed over every client past which (or while the loop is late) the addresses
   * opening the most are refused on accept; 0: connections are never shed (behind a proxy).
   */
  newConnectionsPerS?: number;
  /** Recent new connections (decayed) below which an address's connections are never shed. */
  minConnections?: number;
  /** Half-life of a client's recent cost (ms). */
  halfLifeMs?: number;
  /** How often the loop's delay and the summed rates are read (ms). */
  sampleMs?: number;
}

export interface Shedder {
  /** Seconds the client should wait if it is refused now, 0 if it may be served. */
  retryAfterS(req: IncomingMessage): number;
  /** Charges this response's bytes to its client once written. */
  charge(req: IncomingMessage, res: ServerResponse): void;
  /** A connection was accepted: charges it to its address; seconds to refuse it for, 0 to keep it. */
  connectionRetryAfterS(socket: Socket): number;
  /** The bars now (Infinity: not shedding) and the last delay read, for tests and metrics. */
  state(): { bar: number; connectionBar: number; lagMs: number };
  /** Takes one sample now from `clock.lagMs` (tests; the gateway samples on a timer). */
  sample(): void;
  stop(): void;
}

export interface ShedderClock {
  now(): number;
  /**
   * The loop's delay (ms) since the last read; when given, nothing is sampled on a timer and `sample()`
   * moves the bars (tests). Default: perf_hooks.monitorEventLoopDelay, read every `sampleMs`.
   */
  lagMs?: () => number;
}

interface Score {
  cost: number;
  at: number;
}

/** Clients tracked at most per table (the least recently charged are forgotten first). */
const maxTracked = 10_000;

/**
 * The recent cost of each client address (decaying with a half-life) and the bar above which an address
 * is refused: it comes down from half the top cost while under pressure, halving at each sample, never
 * below the floor, and goes back up, doubling, once the pressure is gone.
 */
class CostTable {
  private readonly scores = new Map<string, Score>();
  bar = Infinity;
  /** Cost charged since the last sample. */
  sinceSample = 0;
  /** The summed rate (cost per second), smoothed over about two seconds: one client's burst does not press. */
  rate = 0;

  constructor(private readonly floor: number, private readonly halfLifeMs: number, private readonly now: () => number) {}

  private decayed(score: Score, t: number): number {
    return score.cost * 2 ** (-(t - score.at) / this.halfLifeMs);
  }

  charge(key: string, cost: number): void {
    const t = this.now();
    const score = this.scores.get(key);
    this.scores.delete(key); // re-inserted last: least recently charged first
    this.scores.set(key, { cost: (score ? this.decayed(score, t) : 0) + cost, at: t });
    if (this.scores.size > maxTracked) this.scores.delete(this.scores.keys().next().value!);
    this.sinceSample += cost;
  }

  /** Seconds until this address's cost decays below the bar, 0 if it is under it. */
  retryAfterS(key: string): number {
    if (this.bar === Infinity) return 0;
    const score = this.scores.get(key);
    if (!score) return 0;
    const cost = this.decayed(score, this.now());
    if (cost < this.bar) return 0;
    return Math.min(30, Math.max(1, Math.ceil((this.halfLifeMs * Math.log2(cost / this.bar)) / 1_000)));
  }

  /** The summed rate after `seconds` more with `sinceSample` charged (an exponential average, time constant 2 s). */
  sampleRate(seconds: number): number {
    const keep = Math.exp(-seconds / 2);
    this.rate = this.rate * keep + (this.sinceSample / seconds) * (1 - keep);
    return this.rate;
  }

  /** Moves the bar by whether the server is under pressure; forgets the addresses whose cost has decayed away. */
  update(pressed: boolean): void {
    const t = this.now();
    let top = 0;
    for (const [key, score] of this.scores) {
      const cost = this.decayed(score, t);
      if (cost < this.floor / 64) this.scores.delete(key);
      else if (cost > top) top = cost;
    }
    this.sinceSample = 0;
    if (pressed) {
      this.bar = Math.max(this.floor, this.bar === Infinity ? top / 2 : this.bar / 2);
    } else if (this.bar !== Infinity) {
      this.bar *= 2;
      if (this.bar > top) this.bar = Infinity;
    }
  }
}

export function createShedder(settings: SheddingSettings, clock: ShedderClock = { now: () => performance.now() }): Shedder {
  const { now } = clock;
  const halfLife = settings.halfLifeMs ?? 10_000;
  const bytes = new CostTable(settings.minBytes, halfLife, now);
  const connections = new CostTable(settings.minConnections ?? 128, halfLife, now);
  const totalBytesPerS = settings.totalBytesPerS ?? 0;
  const newConnectionsPerS = settings.newConnectionsPerS ?? 0;
  const enabled = settings.lagMs > 0 || totalBytesPerS > 0 || newConnectionsPerS > 0;
  let lagMs = 0;
  let sampledAt = now();

  /** Moves both bars by the loop's delay and the summed rates since the last sample. */
  const sample = (late: number) => {
    lagMs = late;
    const t = now();
    const seconds = Math.max(1e-3, (t - sampledAt) / 1_000);
    sampledAt = t;
    const loopLate = settings.lagMs > 0 && lagMs > settings.lagMs;
    const byteRate = bytes.sampleRate(seconds);
    const connectionRate = connections.sampleRate(seconds);
    bytes.update(loopLate || (totalBytesPerS > 0 && byteRate > totalBytesPerS));
    connections.update(loopLate || (newConnectionsPerS > 0 && connectionRate > newConnectionsPerS));
  };

  let stop = () => {};
  if (enabled && !clock.lagMs) {
    const histogram = monitorEventLoopDelay({ resolution: 10 });
    histogram.enable();
    const timer = setInterval(() => {
      // the 90th percentile of the window's delays: a loop late most of the time, not one pause (a GC) in it
      const late = histogram.percentile(90) / 1e6;
      histogram.reset();
      sample(late);
    }, settings.sampleMs ?? 250);
    timer.unref();
    stop = () => {
      clearInterval(timer);
      histogram.disable();
    };
  }

  return {
    retryAfterS(req) {
      const address = req.socket.remoteAddress;
      return address === undefined ? 0 : bytes.retryAfterS(clientKey(address));
    },
    charge(req, res) {
      if (!enabled) return;
      const socket = req.socket;
      const address = socket.remoteAddress;
      if (address === undefined) return;
      const before = socket.bytesWritten;
      res.once('finish', () => {
        const written = socket.bytesWritten - before;
        if (written > 0) bytes.charge(clientKey(address), written);
      });
    },
    connectionRetryAfterS(socket) {
      if (newConnectionsPerS <= 0 || socket.remoteAddress === undefined) return 0;
      const key = clientKey(socket.remoteAddress);
      // refused connections count too: an address reconnecting in a loop stays refused until it slows down
      connections.charge(key, 1);
      return connections.retryAfterS(key);
    },
    state: () => ({ bar: bytes.bar, connectionBar: connections.bar, lagMs }),
    sample: () => sample(clock.lagMs?.() ?? 0),
    stop: () => stop(),
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { clientKey } from './connections.js';

// Load shedding by cost, so that cheap requests keep their latency when many addresses within their byte
// budgets still outrun the one thread: while the event loop is late (SHED_EVENT_LOOP_LAG_MS) the clients
// whose recent answers cost the most bytes are refused first (429), never one below SHED_CLIENT_MIN_BYTES.

export interface SheddingSettings {
  /** Event loop delay (ms) above which the most expensive clients are refused; 0: off. */
  lagMs: number;
  /** Recent answer bytes below which a client is never refused. */
  minBytes: number;
  /** Half-life of a client's recent cost (ms). */
  halfLifeMs?: number;
  /** How often the loop's delay is read (ms). */
  sampleMs?: number;
}

interface Score {
  bytes: number;
  at: number;
}

/** Clients tracked at most (the least recently charged are forgotten first). */
const maxTracked = 10_000;
/** A decayed cost below this is forgotten. */
const forgetBelow = 1_024;

export interface Shedder {
  /** Seconds the client should wait if it is refused now, 0 if it may be served. */
  retryAfterS(req: IncomingMessage): number;
  /** Charges this response's bytes to its client once written. */
  charge(req: IncomingMessage, res: ServerResponse): void;
  /** The bar now (Infinity: not shedding) and the last delay read, for tests and metrics. */
  state(): { bar: number; lagMs: number };
  /** Takes one sample now from `clock.lagMs` (tests; the gateway samples on a timer). */
  sample(): void;
  stop(): void;
}

export interface ShedderClock {
  now(): number;
  /**
   * The loop's delay (ms) since the last read; when given, nothing is sampled on a timer and `sample()`
   * moves the bar (tests). Default: perf_hooks.monitorEventLoopDelay, read every `sampleMs`.
   */
  lagMs?: () => number;
}

export function createShedder(settings: SheddingSettings, clock: ShedderClock = { now: () => performance.now() }): Shedder {
  const { now } = clock;
  const halfLife = settings.halfLifeMs ?? 10_000;
  const scores = new Map<string, Score>();
  let bar = Infinity;
  let lagMs = 0;

  const decayed = (score: Score, t: number) => score.bytes * 2 ** (-(t - score.at) / halfLife);

  /** Moves the bar by the loop's delay since the last sample. */
  const sample = (late: number) => {
    lagMs = late;
    const t = now();
    let top = 0;
    for (const [key, score] of scores) {
      const bytes = decayed(score, t);
      if (bytes < forgetBelow) scores.delete(key);
      else if (bytes > top) top = bytes;
    }
    if (lagMs > settings.lagMs) {
      // late: the most expensive first, then ever cheaper ones, never below the floor
      bar = Math.max(settings.minBytes, bar === Infinity ? top / 2 : bar / 2);
    } else if (bar !== Infinity) {
      bar *= 2;
      if (bar > top) bar = Infinity;
    }
  };

  let stop = () => {};
  if (settings.lagMs > 0 && !clock.lagMs) {
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
      if (bar === Infinity || req.socket.remoteAddress === undefined) return 0;
      const score = scores.get(clientKey(req.socket.remoteAddress));
      if (!score) return 0;
      const bytes = decayed(score, now());
      if (bytes < bar) return 0;
      // until its cost has decayed below the bar
      return Math.min(30, Math.max(1, Math.ceil((halfLife * Math.log2(bytes / bar)) / 1_000)));
    },
    charge(req, res) {
      if (settings.lagMs <= 0) return;
      const socket = req.socket;
      const address = socket.remoteAddress;
      if (address === undefined) return;
      const before = socket.bytesWritten;
      res.once('finish', () => {
        const bytes = socket.bytesWritten - before;
        if (bytes <= 0) return;
        const key = clientKey(address);
        const t = now();
        const score = scores.get(key);
        const total = (score ? decayed(score, t) : 0) + bytes;
        scores.delete(key); // re-inserted last: least recently charged first
        scores.set(key, { bytes: total, at: t });
        if (scores.size > maxTracked) scores.delete(scores.keys().next().value!);
      });
    },
    state: () => ({ bar, lagMs }),
    sample: () => sample(clock.lagMs?.() ?? 0),
    stop: () => stop(),
  };
}

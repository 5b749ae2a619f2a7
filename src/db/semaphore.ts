import { ServiceUnavailableError } from './errors.js';

// Admission to the query pool. postgres.js queues statements internally (and pipelines them onto busy
// connections) without telling anyone when a statement gets its connection, so the gateway keeps its own
// permits in front of it: one per pool connection. That gives the exact moment a statement starts (the
// backup timer and the request's database time start there, not while it is queued), a queue that is
// bounded in length and in wait ("server busy", retryable) and, per request, a cap on statements in
// flight, so that one heavy request cannot hold every connection while cheap ones wait behind it.
//
// Hand-written rather than a library: the few semaphore packages (p-limit, p-queue, async-sema) bound
// concurrency, but none bounds the wait or the queue length of a waiter with a typed rejection.

export interface SemaphoreOptions {
  /** Permits. */
  size: number;
  /** Waiters beyond this are refused at once (default: unbounded). */
  maxQueue?: number;
  /** A waiter not served within this many ms is refused (default: waits as long as it takes). */
  queueTimeoutMs?: number;
}

interface Waiter {
  grant(): void;
  rank?: () => number;
  timer?: NodeJS.Timeout;
}

/**
 * A released permit goes straight to a waiter: the one of lowest rank (its request holds the fewest
 * connections), the oldest among equals. Without ranks, plain arrival order (FIFO).
 */
export class Semaphore {
  private held = 0;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly options: SemaphoreOptions) {}

  /** Permits held. */
  get inUse(): number {
    return this.held;
  }

  /** Waiters in the queue. */
  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Resolves once a permit is held (at once when one is free). `onQueued` is called only when the caller
   * has to wait; the function it returns when the wait ends (served or refused). Rejects with
   * ServiceUnavailableError('server busy') when the queue is full or the wait exceeds its limit. `rank`
   * is read when a permit is handed on: the lowest is served first, so a cheap request that holds no
   * connection overtakes the queued statements of one that holds several.
   */
  acquire(onQueued?: () => () => void, rank?: () => number): Promise<void> {
    if (this.held < this.options.size) {
      this.held++;
      return Promise.resolve();
    }
    if (this.waiters.length >= (this.options.maxQueue ?? Infinity)) return Promise.reject(busy());
    const waited = onQueued?.() ?? noop;
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { grant: () => { waited(); resolve(); }, rank };
      if (this.options.queueTimeoutMs !== undefined) {
        waiter.timer = setTimeout(() => {
          const at = this.waiters.indexOf(waiter);
          if (at >= 0) this.waiters.splice(at, 1);
          waited();
          reject(busy());
        }, this.options.queueTimeoutMs);
      }
      this.waiters.push(waiter);
    });
  }

  /** Changes the number of permits; growing hands the new ones to waiters at once. */
  resize(size: number): void {
    if (size === this.options.size) return;
    (this.options as { size: number }).size = size;
    while (this.held < size && this.waiters.length > 0) {
      this.held++;
      this.release();
    }
  }

  release(): void {
    // shrunk (resize) below the permits held: this one is retired rather than handed on
    if (this.held > this.options.size) {
      this.held--;
      return;
    }
    const next = this.next();
    if (next) {
      // the permit passes to the next waiter: `held` stays the same
      clearTimeout(next.timer);
      next.grant();
    } else {
      this.held--;
    }
  }

  /** Takes the waiter to serve next out of the queue. */
  private next(): Waiter | undefined {
    let best = 0;
    let bestRank = Infinity;
    for (let i = 0; i < this.waiters.length; i++) {
      const rank = this.waiters[i]!.rank?.() ?? 0;
      if (rank < bestRank) {
        best = i;
        bestRank = rank;
        if (rank <= 0) break;
      }
    }
    return this.waiters.splice(best, 1)[0];
  }
}

const noop = () => {};

const busy = () => new ServiceUnavailableError('server busy');

// A circuit breaker for the shared cache. After `failures` Redis commands in a row have failed (timed out,
// refused) over at least `minSpanMs`, the cache is skipped for `openMs`; then it is half-open: one PING of its own (bounded by the
// command timeout) decides whether to close again or to stay open for another period. Requests never
// serve as the probe, so once it is open a hung Redis costs no request anything.
//
// Hand-written rather than opossum: opossum's half-open state lets the next real call through as the
// probe (a request would wait out the timeout), it wraps every call in its own promise, timer and events
// (this sits on every cache lookup), and its rolling-window percentages are more than "N failures in a
// row" needs.
//
// Why a span as well as a count: one stall of the event loop (GC, a starved CPU) longer than the command
// timeout fails every command in flight at once — their timers fire before their replies are read — on a
// healthy Redis. A hung Redis keeps failing; a stall does not.

export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Consecutive failures that open the breaker… */
  failures: number;
  /** …when the first of them is at least this old (ms). */
  minSpanMs: number;
  /** How long it stays open before probing. */
  openMs: number;
  /** The probe: resolves when the store answers again. */
  probe: () => Promise<unknown>;
  onChange?: (state: BreakerState, previous: BreakerState, reason: string) => void;
}

export class Breaker {
  private current: BreakerState = 'closed';
  private failed = 0;
  private since = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly options: BreakerOptions) {}

  get state(): BreakerState {
    return this.current;
  }

  /** Whether requests may use the store now. */
  allows(): boolean {
    return this.current === 'closed';
  }

  success(): void {
    if (this.current === 'closed') this.failed = 0;
  }

  failure(reason: string): void {
    if (this.current !== 'closed') return;
    const now = performance.now();
    if (this.failed++ === 0) this.since = now;
    if (this.failed >= this.options.failures && now - this.since >= this.options.minSpanMs) this.open(reason);
  }

  /** Opens at once (the connection is known to be gone: nothing to count). */
  trip(reason: string): void {
    if (this.current === 'closed' && !this.stopped) this.open(reason);
  }

  private open(reason: string): void {
    const previous = this.current;
    this.current = 'open';
    this.options.onChange?.('open', previous, reason);
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.probe(), this.options.openMs);
    this.timer.unref();
  }

  private async probe(): Promise<void> {
    this.current = 'half-open';
    this.options.onChange?.('half-open', 'open', 'probing');
    try {
      await this.options.probe();
      this.failed = 0;
      this.current = 'closed';
      this.options.onChange?.('closed', 'half-open', 'probe answered');
    } catch (error) {
      this.open(`probe failed: ${(error as Error)?.message ?? String(error)}`);
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}

import {
  InvalidInputError, RequestBudgetError, RequestsBusyError, RequestTimeBudgetError, ServiceUnavailableError, describeUnavailable, isInvalidInput, isRetryable, isUnavailable,
} from './errors.js';
import { currentScope, liveRows, type Clock, type RequestScope } from '../request/scope.js';
import { Semaphore } from './semaphore.js';

/** A database server the runner can send statements to (src/db/sources.ts). */
export interface RoutedSource {
  /** host:port, or "embedded". */
  label: string;
  /** Sends a statement, built by any of the gateway's Sql instances, on this source's pool. */
  send<T>(query: PromiseLike<T>): Promise<T>;
  /** A statement on this source failed to reach it (taken out of rotation until its next good check). */
  failed(error: unknown): void;
}

/** Which source a request's statements go to (one per request, src/db/sources.ts). */
export interface Router {
  /** The source of the current request (chosen at its first use and kept); the primary outside a request. */
  pinned(): RoutedSource;
  /** Where a statement of the current request that failed on `source` with a retryable error may be sent again. */
  retryTarget(source: RoutedSource, error: unknown): RoutedSource | null;
}

export interface RunnerOptions {
  /** Application-side limit per statement, counted from the moment it holds a connection. */
  timeoutMs: number;
  /** Connections of the pool (permits of the admission gate), per server. */
  poolMax: number;
  /** Servers the router sends to (one pool and one gate each): the pool size reported is poolMax × servers. */
  servers: number;
  /** Statements waiting for a connection beyond this are refused ("server busy"). */
  maxQueue: number;
  /** A statement waiting longer than this for a connection is refused ("server busy"). */
  queueTimeoutMs: number;
  /** Rows one request may fetch; its statements after that are refused (RequestBudgetError). */
  requestMaxRows: number;
  /** Statements of one request in flight (queued or running) at once; the rest wait in the request's own line. */
  requestMaxConcurrent: number;
  /**
   * Database time one request may spend: the sum of its statements' times with a connection (overlapping
   * ones each count: each holds a connection). Its statements after that are refused (RequestTimeBudgetError),
   * so aliases or batch elements cannot multiply what one request costs the database. Default: unbounded.
   */
  requestTimeBudgetMs?: number;
  /**
   * Rows held by every HTTP request in progress together past which a request already holding
   * `busyRequestRows` rows is refused its further statements (RequestsBusyError): the rows of answers still
   * being built and written are what fills the heap, and many clients each within their own row budget add
   * up. Requests holding fewer rows are never refused. Default: unbounded.
   */
  maxLiveRows?: number;
  /** Rows a request holds from which it counts as heavy for `maxLiveRows` (default 1,000). */
  busyRequestRows?: number;
  /**
   * The share of each pool that anonymous requests' statements may hold together now (1: all of it), so
   * that keyed requests always find the rest (ANONYMOUS_SHARE, in force while any API key exists): written
   * when the API keys are reloaded, read by each anonymous statement.
   */
  shares?: PoolShares;
}

/** How the pool is shared now (src/app.ts keeps it current). */
export interface PoolShares {
  anonymous: number;
}

/** What one request has used of the pool: its own line of statements and the rows fetched so far. */
interface RequestShare {
  line: Semaphore;
  rows: number;
  /** Milliseconds its statements have held connections (summed over statements, finished ones). */
  busyMs: number;
  /** Pool connections its statements hold now (the gate serves requests holding fewer first). */
  connections: number;
}

/**
 * Runs one statement through the admission gate with an application-side time limit. The server's
 * statement_timeout is the real limit; this one backs it up where the engine cannot enforce it (the
 * embedded engine ignores startup parameters). Connection failures become ServiceUnavailableError.
 *
 * A statement of a request first takes a place in the request's own line (requestMaxConcurrent), is
 * refused if the request has spent its row budget, then waits (bounded) for a pool connection; only then
 * is it sent, and only then do its timer and its database time start.
 */
export function createRunner(options: RunnerOptions, router: Router) {
  const admission = createAdmission(options);
  const budgets = createRequestBudgets(options);

  async function run<T>(query: PromiseLike<T>): Promise<T> {
    const scope = currentScope();
    const share = scope ? budgets.shareOf(scope) : undefined;
    await share?.line.acquire();
    try {
      const refusal = budgets.overBudget(share);
      if (refusal) throw refusal;
      return await sendWithRetry(query, share, scope);
    } finally {
      share?.line.release();
    }
  }

  /** Sends on the request's source; a retryable failure is sent again once where the router says. */
  async function sendWithRetry<T>(query: PromiseLike<T>, share: RequestShare | undefined, scope: RequestScope | undefined): Promise<T> {
    const source = router.pinned();
    try {
      return await attempt(query, source, share, scope);
    } catch (error) {
      if (!isRetryable(error)) throw mapError(error);
      source.failed(error);
      // reads are safe to send again: once, on a source at least as fresh as the request's (src/db/sources.ts)
      const other = router.retryTarget(source, error);
      if (!other) throw mapError(error);
      try {
        return await attempt(query, other, share, scope);
      } catch (again) {
        if (isRetryable(again)) other.failed(again);
        throw mapError(again);
      }
    }
  }

  /** Waits (bounded) for a connection of `source`, then sends; errors come back as the driver gave them. */
  async function attempt<T>(query: PromiseLike<T>, source: RoutedSource, share: RequestShare | undefined, scope: RequestScope | undefined): Promise<T> {
    const track = scope ? new StatementTrack(scope) : untracked;
    let permits: Permits;
    try {
      permits = await admission.acquire(source, isAnonymous(scope), () => (track.queued(), noop), share ? () => share.connections : undefined);
    } catch (error) {
      track.done();
      throw error;
    }
    const refusal = budgets.overBudget(share);
    if (refusal) {
      // a budget ran out while this statement waited: the connection goes to the next one unused
      permits.release();
      track.done();
      throw refusal;
    }
    if (share) share.connections++;
    track.running();
    return execute(() => source.send(query), { permits, share, track, timeoutMs: options.timeoutMs, fetched: budgets.fetched, scope });
  }

  return Object.assign(run, { pool: admission.pool });
}

interface Permits {
  release(): void;
}

/** The pool's admission gates: one per source (its pool of poolMax connections), and anonymous requests' reserve in front of it. */
function createAdmission(options: RunnerOptions) {
  const semaphore = (size: number) => new Semaphore({ size, maxQueue: options.maxQueue, queueTimeoutMs: options.queueTimeoutMs });
  const gates = new Map<RoutedSource, Semaphore>();
  const gateOf = (source: RoutedSource) => {
    let gate = gates.get(source);
    if (!gate) gates.set(source, gate = semaphore(options.poolMax));
    return gate;
  };
  // anonymous requests' own gate per source: at most the share of the pool's permits
  const reserves = new Map<RoutedSource, Semaphore>();
  const reserveOf = (source: RoutedSource, anonymous: boolean): Semaphore | null => {
    const fraction = anonymous ? options.shares?.anonymous ?? 1 : 1;
    if (fraction >= 1) return null;
    const size = Math.max(1, Math.floor(options.poolMax * fraction));
    let reserve = reserves.get(source);
    if (!reserve) reserves.set(source, reserve = semaphore(size));
    reserve.resize(size);
    return reserve;
  };
  return {
    /** Resolves with the permits of a connection of `source` (bounded wait, "server busy" beyond it). */
    async acquire(source: RoutedSource, anonymous: boolean, queued: () => () => void, rank?: () => number): Promise<Permits> {
      const gate = gateOf(source);
      const reserve = reserveOf(source, anonymous);
      await reserve?.acquire(queued, rank);
      await gate.acquire(queued, rank).catch((error: unknown) => {
        reserve?.release();
        throw error;
      });
      return { release: () => (gate.release(), reserve?.release()) };
    },
    /** The gates' real state summed over the sources, for the pool gauges (src/observability/metrics.ts). */
    pool() {
      let inUse = 0;
      let waiting = 0;
      for (const gate of gates.values()) {
        inUse += gate.inUse;
        waiting += gate.queued;
      }
      return { inUse, waiting, size: options.poolMax * options.servers };
    },
  };
}

/** Each request's share of the pool and whether it has spent its row or time budget. */
function createRequestBudgets(options: RunnerOptions) {
  const shares = new WeakMap<object, RequestShare>();
  const timeBudgetMs = options.requestTimeBudgetMs ?? Infinity;
  const heavyRows = options.busyRequestRows ?? 1_000;
  const maxLiveRows = options.maxLiveRows ?? Infinity;
  return {
    shareOf(scope: object): RequestShare {
      let share = shares.get(scope);
      if (!share) shares.set(scope, share = { line: new Semaphore({ size: options.requestMaxConcurrent }), rows: 0, busyMs: 0, connections: 0 });
      return share;
    },
    /** Why the request may send no further statement, or null. */
    overBudget(share: RequestShare | undefined): Error | null {
      if (!share) return null;
      if (share.rows >= options.requestMaxRows) return new RequestBudgetError();
      if (share.busyMs >= timeBudgetMs) return new RequestTimeBudgetError();
      return share.rows >= heavyRows && liveRows.rows > maxLiveRows ? new RequestsBusyError() : null;
    },
    /** Counts rows a statement fetched, for its request and, until the request ends, for all of them together. */
    fetched(share: RequestShare | undefined, scope: RequestScope | undefined, rows: number): void {
      if (share) share.rows += rows;
      if (scope?.rowsHeld === undefined) return;
      scope.rowsHeld += rows;
      liveRows.rows += rows;
    },
  };
}


/** How one statement spends its time, as the runner learns it. */
interface Track {
  /** It has to wait for a pool connection. */
  queued(): void;
  /** It holds a connection (its database time starts). */
  running(): void;
  /** It settled (result, error or refusal); idempotent. */
  done(): void;
}

/**
 * One statement's states, recorded into its request's scope (one object per statement, no closures: this
 * runs for every statement). Overlapping statements of one request are counted once: dbMs and queueMs are
 * the lengths of the unions of their intervals.
 */
class StatementTrack implements Track {
  private state: 'new' | 'queued' | 'running' | 'done' = 'new';

  constructor(private readonly scope: RequestScope) {
    if (scope.pool) scope.pool.inflight++;
  }

  queued(): void {
    if (this.state !== 'new') return;
    this.state = 'queued';
    open(this.scope.clocks.queued);
  }

  running(): void {
    if (this.state === 'running' || this.state === 'done') return;
    this.leave();
    this.state = 'running';
    open(this.scope.clocks.running);
  }

  done(): void {
    if (this.state === 'done') return;
    this.leave();
    this.state = 'done';
    if (this.scope.pool) this.scope.pool.inflight--;
  }

  private leave(): void {
    const { scope } = this;
    if (this.state === 'queued') scope.queueMs += close(scope.clocks.queued);
    if (this.state === 'running') {
      scope.dbMs += close(scope.clocks.running);
      scope.dbStatements++;
    }
  }
}

function open(clock: Clock): void {
  if (clock.open++ === 0) clock.since = performance.now();
}

/** Closes one interval; returns the time to add (the union's length grows only when the last one closes). */
function close(clock: Clock): number {
  return --clock.open === 0 ? performance.now() - clock.since : 0;
}

/** A statement outside a request (start-up, tools): nothing to record. */
const untracked: Track = { queued() {}, running() {}, done() {} };

interface Execution {
  permits: Permits;
  share: RequestShare | undefined;
  track: Track;
  timeoutMs: number;
  /** Counts the rows fetched (the request's and every request's together). */
  fetched: (share: RequestShare | undefined, scope: RequestScope | undefined, rows: number) => void;
  scope: RequestScope | undefined;
}

/** Sends with the connection held; settles with the rows, the error or "query timed out", whichever comes first. */
function execute<T>(send: () => Promise<T>, { permits, share, track, timeoutMs, fetched, scope }: Execution): Promise<T> {
  // the permit is given back when the driver is done with the statement, not when the caller gives up
  // on it: a timed-out statement still occupies its connection until the server's statement_timeout
  // ends it. (No driver cancel here: postgres.js leaves a failed cancel as an unhandled rejection.)
  let released = false;
  const started = performance.now();
  const release = () => {
    if (released) return;
    released = true;
    if (share) {
      share.connections--;
      share.busyMs += performance.now() - started;
    }
    permits.release();
  };
  let result: Promise<T>;
  try {
    // postgres.js sends a query when it is first awaited: here, with the connection ours
    result = send();
  } catch (error) {
    track.done();
    release(); // never sent
    return Promise.reject(error);
  }
  // one promise settled by whichever comes first, the rows or the timer: no Promise.race per statement
  let timedOut = false;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      timedOut = true;
      track.done();
      // a connection that does not answer even then is given up on after another period
      setTimeout(release, timeoutMs).unref();
      reject(new ServiceUnavailableError('query timed out'));
    }, timeoutMs);
    result.then((rows) => {
      release();
      if (timedOut) return; // answered "query timed out" already
      clearTimeout(timer);
      track.done();
      if (Array.isArray(rows)) fetched(share, scope, rows.length);
      resolve(rows);
    }, (error: unknown) => {
      release();
      if (timedOut) return;
      clearTimeout(timer);
      track.done();
      reject(error);
    });
  });
}

/** A statement of a request made without an API key (statements outside a request are the gateway's own). */
const isAnonymous = (scope: { keyName?: string } | undefined) => scope !== undefined && scope.keyName === undefined;

/** What a client may be told about a failed statement (never the driver's error, which may carry SQL). */
function mapError(error: unknown): unknown {
  if (error instanceof ServiceUnavailableError) return error;
  if (isUnavailable(error)) return new ServiceUnavailableError(describeUnavailable(error));
  if (isInvalidInput(error)) return new InvalidInputError('text arguments must not contain NUL (U+0000) characters');
  return error;
}

export type Runner = ReturnType<typeof createRunner>;

const noop = () => {};

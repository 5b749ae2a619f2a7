import type { Logger } from 'pino';
import { createSql, type Sql } from './client.js';
import type { RoutedSource, Router } from './statement-runner.js';
import { within } from './deadline.js';
import { ReplicaBehindError, ServiceUnavailableError, isConnectFailure, isSessionLost } from './errors.js';
import { primaryHistory } from './freshness.js';
import { behindTransactionPooler } from './pooler-probe.js';
import { noRequestScope, type RequestScopeAccessor } from './scope.js';
import { hostLabel } from '../domain/database-urls.js';
import { createVersionWatcher, readSnapshot, type DataSnapshot, type VersionWatcher } from './version.js';

// The servers the gateway reads from: the primary (DATABASE_URL) and the read replicas
// (DATABASE_READ_URLS). Each has its own query pool, its own admission gate (src/db/semaphore.ts) and its
// own connection for state reads.
//
// Routing is per request, not per statement: a request is pinned, at its first use, to one source in
// rotation (replicas round robin, the primary when none is) together with the data snapshot that
// source had then. Its cache key, its freshness extension and all its statements use that pin. Since a
// server's data version only moves forward and the pinned snapshot was read from that very server
// before the request began, every statement of the request sees data at least as new as the version
// its answer is stored under: an answer from a lagging replica is stored under the replica's own
// (older) version, never under the primary's. A statement retried elsewhere goes only to a source at
// least as new (the primary always is).
//
// Freshness, proven and not assumed (src/db/freshness.ts): every read of the primary's data version says
// the primary's data was at most that version when the read was sent. A replica whose version is at least
// that one is at most `now − that moment` behind, and that bound is checked at the moment it matters: when
// a request is pinned (its cache lookup included) and again when each statement is about to go to the
// replica. Over MAX_REPLICA_LAG_MS a statement goes to the primary instead and the replica leaves the
// rotation; it comes back once its next check proves it within the budget. A replica at a version the
// gateway has not seen on the primary (it restarted far behind, or the gateway has just started) is not
// fresh but unknown: out. One exception, the only time a replica serves without that proof: while the
// primary's version cannot be read at all, a replica that has at least the last version the primary
// showed keeps serving (nothing newer can be known; the lag gauge keeps growing meanwhile).
//
// Session checks: a session that is writable or has no statement timeout is unsafe (refused unless
// DB_ALLOW_UNSAFE_SESSION); a transaction pooler in front of a server without DB_POOLER=pgbouncer
// (src/db/pooler-probe.ts at start, or a prepared statement lost while serving) is refused outright: its
// prepared statements would fail under load.

export interface SourcesOptions {
  primary: { url?: string; socketPath?: string };
  /** One URL per replica host (src/domain/database-urls.ts expands lists and multi-host URLs). */
  replicas: string[];
  /** The replicas' names in metrics, in the same order (default: their position, from 0). */
  replicaNames?: string[];
  poolMax: number;
  statementTimeoutMs: number;
  connectTimeoutS: number;
  pooler: 'none' | 'pgbouncer';
  allowUnsafeSession: boolean;
  maxLagMs: number;
  pollMs: number;
  listen: boolean;
  logger: Logger;
  onQuery?: (text: string, params?: readonly unknown[]) => void;
  /** The request a statement belongs to: each request is pinned to one source (none: always the primary). */
  scope?: RequestScopeAccessor;
}

export type Safety = 'unchecked' | 'safe' | 'unsafe';

export interface Source extends RoutedSource {
  role: 'primary' | 'replica';
  /** Its name in metrics: `primary`, or a replica's configured name (default: its position, from 0). */
  name: string;
  /** The query pool. */
  sql: Sql;
  /** Last data snapshot read from this server. */
  snapshot(): DataSnapshot | null;
  /** Replicas: the proven bound, now, on how far (ms) its data is behind the primary's (null: unknown). The primary: 0. */
  readonly lagMs: number | null;
  /** A replica: its last check found it reachable, safe and within the budget (each use checks the budget again). */
  inRotation: boolean;
  /** Why a replica is out of rotation. */
  reason?: string;
  safety: Safety;
  /** Why this server is refused outright (a transaction pooler without DB_POOLER), whatever DB_ALLOW_UNSAFE_SESSION says. */
  refusal: string | null;
  /** Statements that failed because the server session changed under them (a prepared statement lost). */
  poolerErrors: number;
}

/** A source with what only this module touches: its state connection, its snapshot, its session checks. */
type Member = Source & {
  stateSql: Sql;
  setSnapshot(snapshot: DataSnapshot): void;
  /** A fresh client like the pool's (the pooler probe's own connections). */
  open(poolMax: number): Sql;
  reachable: boolean;
  sessionChecked: boolean;
  /** What the safety check found wrong (empty: nothing, or not checked yet). */
  problems: string[];
};

interface Pin {
  source: Source;
  snapshot: DataSnapshot | null;
}

export interface Sources {
  primary: Source;
  replicas: Source[];
  /** The primary's data-version watcher (LISTEN and/or polling). */
  watcher: VersionWatcher;
  /** The primary's state connection (version reads, LISTEN): for other state reads (block times, live
   * events) that must neither queue behind the pool's statements nor count as a request's. */
  primaryStateSql: Sql;
  router: Router & {
    /** The current request's pin (chosen now if it has none): its source and that source's snapshot. */
    pin(): Pin;
    /** The pinned source's latest known snapshot (the cache refuses to store once it has moved on). */
    live(): DataSnapshot | null;
  };
  /** The client-side bound on one state read or start-up step (ms): src/db/deadline.ts. */
  stateReadMs: number;
  /** LISTEN established and not known to be useless (behind a transaction pooler). */
  listenUp(): boolean;
  /** Why the gateway cannot serve now (null: it can, as far as the sources' states say). */
  unready(): string | null;
  onVersionChange(listener: (next: DataSnapshot, previous: DataSnapshot | null, via: 'start' | 'notify' | 'poll') => void): void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

const listenProbeChannel = 'igw_listen_probe';
const stateStatementTimeoutMs = 5_000;

const safetyCheck = (sql: Sql) => sql<{ read_only: string; statement_timeout: string; in_recovery: boolean }[]>`
  SELECT current_setting('transaction_read_only') AS read_only, current_setting('statement_timeout') AS statement_timeout,
         pg_is_in_recovery() AS in_recovery`;

export function createSources(options: SourcesOptions): Sources {
  const { logger } = options;
  const pooled = options.pooler === 'pgbouncer';
  const embedded = options.primary.socketPath !== undefined;
  const sqlOptions = {
    statementTimeoutMs: options.statementTimeoutMs, connectTimeoutS: options.connectTimeoutS, readOnly: true, pooler: options.pooler,
  } as const;
  const listeners: Parameters<Sources['onVersionChange']>[0][] = [];
  const history = primaryHistory();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // the bound on one state read or start-up check: a connection, then the state connection's statement
  // timeout (a misconfigured pooler can hold a statement for ever: src/db/deadline.ts)
  const stateReadMs = options.connectTimeoutS * 1_000 + stateStatementTimeoutMs;
  const names = options.replicaNames ?? options.replicas.map((_, i) => String(i));
  if (names.length !== options.replicas.length) {
    throw new Error(`DATABASE_READ_NAMES: ${names.length} names for ${options.replicas.length} replicas`);
  }

  function makeSource(role: 'primary' | 'replica', target: { url?: string; socketPath?: string }, name: string): Member {
    const sql = createSql({ ...target, ...sqlOptions, poolMax: options.poolMax, onQuery: options.onQuery });
    // the state connection: version reads never queue behind the pool's statements
    const stateSql = createSql({ ...target, ...sqlOptions, statementTimeoutMs: stateStatementTimeoutMs, poolMax: 1 });
    let snapshot: DataSnapshot | null = null;
    const source: Member = {
      role,
      name,
      label: target.url ? hostLabel(target.url) : 'embedded',
      sql,
      stateSql,
      // its own application_name: two short-lived sessions at start, apart from the pool's in pg_stat_activity
      open: (poolMax) => createSql({
        ...target, ...sqlOptions, statementTimeoutMs: stateStatementTimeoutMs, poolMax, applicationName: 'inscription-gateway-probe',
      }),
      // the primary's is the watcher's, set as it changes (onChange below); a replica's, set by its check
      snapshot: () => snapshot,
      setSnapshot: (next) => void (snapshot = next),
      get lagMs() {
        return role === 'primary' ? 0 : lagOf(source);
      },
      inRotation: role === 'primary',
      reason: role === 'replica' ? 'not checked yet' : undefined,
      safety: embedded ? 'safe' : 'unchecked',
      refusal: null,
      poolerErrors: 0,
      reachable: role === 'primary',
      sessionChecked: embedded,
      problems: [],
      send<T>(query: PromiseLike<T>): Promise<T> {
        if (source.refusal) return Promise.reject(new ServiceUnavailableError(source.refusal));
        if (source.safety === 'unsafe' && !options.allowUnsafeSession) return Promise.reject(new ServiceUnavailableError(unsafeReason(source)));
        // the budget holds at the moment of reading, not only at the last check
        if (role === 'replica' && !fresh(source)) return Promise.reject(new ReplicaBehindError());
        return sendOn(sql, query, (error) => sessionLost(source, error));
      },
      failed(error) {
        if (isSessionLost(error)) return sessionLost(source, error);
        if (role !== 'replica') return;
        if (error instanceof ReplicaBehindError) outOfRotation(source, 'lagging');
        else if (isConnectFailure(error)) outOfRotation(source, 'unreachable');
      },
    };
    return source;
  }

  // postgres.js 3.x: a Query holds the handler of the Sql instance that built it (the one it is sent through)
  const handlers = new WeakMap<Sql, unknown>();
  function handlerOf(sql: Sql): unknown {
    let handler = handlers.get(sql);
    if (handler === undefined) handlers.set(sql, (handler = (sql`SELECT 1` as unknown as { handler: unknown }).handler));
    return handler;
  }

  /**
   * Sends `query` (built by any Sql instance of this process: postgres.js queries are their template
   * strings and arguments until awaited) on `sql`. Behind a transaction pooler each statement runs in
   * its own read-only transaction with statement_timeout set for it: session settings do not survive
   * there, transaction settings do. The setting and the statement are pipelined (one round trip), plus
   * BEGIN and COMMIT. Without DB_POOLER, `onLost` hears of a prepared statement the driver found missing
   * and prepared again on its own (a transaction pooler in front: the answer came, but only by luck).
   */
  function sendOn<T>(sql: Sql, query: PromiseLike<T>, onLost?: (error: unknown) => void): Promise<T> {
    // postgres.js 3.x (pinned): a Query keeps `strings`, `args` and `options` and is sent on first await
    const q = query as unknown as {
      tagged: boolean; strings: TemplateStringsArray & string[]; args: unknown[]; options: object; handler: unknown; executed: boolean;
    };
    if (!Array.isArray(q.strings) || !Array.isArray(q.args)) throw new TypeError('not a postgres.js query');
    // built by the very Sql it goes out on (the store's statements on the primary) and not sent yet: as it is
    const reissue = (on: Sql) => (q.tagged
      ? on(q.strings, ...(q.args as never[]))
      : on.unsafe(q.strings[0]!, q.args as never[], q.options)) as unknown as Promise<T>;
    if (!pooled) {
      const sent = !q.executed && q.handler === handlerOf(sql) ? query as Promise<T> : reissue(sql);
      return onLost ? watchRetry(sent, onLost) : sent;
    }
    return sql.begin('read only', (tx) => [
      tx`SELECT set_config('statement_timeout', ${String(options.statementTimeoutMs)}, true)`,
      reissue(tx as unknown as Sql),
    ]).then((results) => (results as unknown[])[1] as T);
  }

  const primary = makeSource('primary', options.primary, 'primary');
  const replicas = options.replicas.map((url, i) => makeSource('replica', { url }, names[i]!));
  const all = [primary, ...replicas];
  // the last connection failure of the primary that names a fix (null: none, or it answers)
  let primaryProblem: string | null = null;

  const listen = options.listen && !embedded && !pooled;
  if (options.listen && pooled) {
    logger.warn({ pooler: options.pooler, pollMs: options.pollMs },
      'LISTEN cannot work behind a transaction pooler (DB_POOLER=pgbouncer): learning data versions by polling only');
  }
  // the embedded engine's socket server accepts LISTEN but delivers no notifications: poll only
  const watcher: VersionWatcher = createVersionWatcher(primary.stateSql, {
    pollMs: options.pollMs,
    readTimeoutMs: stateReadMs,
    listen,
    onRead: (snapshot, sentAt) => {
      history.read(snapshot, sentAt);
      primaryProblem = null;
    },
    onChange: (next, previous, via) => {
      primary.setSnapshot(next);
      for (const listener of listeners) listener(next, previous, via);
    },
    onError: (error, where) => {
      const message = (error as Error).message;
      logger.warn({ where, err: message },
        where === 'listen' ? 'LISTEN failed: learning data versions by polling only' : 'cannot read the data version: answering without the cache');
      // PgBouncer refuses statement_timeout and default_transaction_read_only as startup parameters
      if (!pooled && refusesStartupParameters(error)) {
        primaryProblem = startupParametersRefused;
        logger.error({ err: message }, 'the server refuses startup parameters: behind PgBouncer set DB_POOLER=pgbouncer');
      }
    },
  });

  // LISTEN can be accepted and still never deliver (behind a transaction pooler the LISTEN ran on a server
  // session that has since gone back to the pool): one notification to ourselves says whether it works
  let listenWorks = true;
  async function probeListen() {
    if (!watcher.listening()) return;
    const token = Math.random().toString(36).slice(2);
    let heard!: () => void;
    const arrived = new Promise<void>((resolve) => (heard = resolve));
    const probe = await primary.stateSql.listen(listenProbeChannel, (payload) => payload === token && heard());
    try {
      // no parameters: postgres.js sends a statement with parameters as Parse/Describe/Flush first and
      // waits for the description, a reply a transaction pooler in front can lose (see deadline.ts);
      // both values are ours ([a-z_0-9])
      await primary.stateSql.unsafe(`SELECT pg_notify('${listenProbeChannel}', '${token}')`);
      listenWorks = await Promise.race([arrived.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2_000).unref())]);
    } finally {
      await probe.unlisten().catch(() => {});
    }
    if (!listenWorks) {
      logger.warn({ pollMs: options.pollMs },
        'LISTEN is accepted but notifications do not arrive (a transaction pooler in front? set DB_POOLER=pgbouncer): learning data versions by polling only');
    }
  }

  function outOfRotation(source: Source, reason: string) {
    if (source.inRotation) logger.warn({ replica: source.name, server: source.label, reason, lagMs: source.lagMs }, 'replica out of rotation');
    source.inRotation = false;
    source.reason = reason;
  }

  /** The proven bound on how far `source` (a replica) is behind the primary now, in ms; null when unknown. */
  function lagOf(source: Member): number | null {
    const snapshot = source.snapshot();
    if (!source.reachable || !snapshot) return null;
    const at = history.provenAt(snapshot);
    return at === null ? null : Math.max(0, performance.now() - at);
  }

  /** Whether answers may come from `source` (a replica) now; the one exception: see the head of this file. */
  function fresh(source: Member): boolean {
    const lag = lagOf(source);
    if (lag !== null && lag <= options.maxLagMs) return true;
    const snapshot = source.snapshot();
    return source.reachable && snapshot !== null && watcher.failing() && history.atLatest(snapshot);
  }

  const unsafeReason = (source: Member) => `unsafe database session on ${source.name}: ${source.problems.join(' and ')}`;
  const poolerRefusal = (source: Source) => `transaction pooler in front of ${source.name} without DB_POOLER=pgbouncer`;

  /** A prepared statement vanished between two statements of one connection: a transaction pooler. */
  function sessionLost(source: Member, error: unknown) {
    source.poolerErrors++;
    if (pooled || source.refusal) return;
    source.refusal = poolerRefusal(source);
    if (source.role === 'replica') outOfRotation(source, source.refusal);
    logger.error({ source: source.name, server: source.label, err: (error as Error).message },
      `${source.refusal}: its prepared statements are lost between statements; refusing to serve from it (set DB_POOLER=pgbouncer)`);
  }

  async function checkSafety(source: Member) {
    if (source.safety !== 'unchecked') return;
    // on the state connection: opened like the pool's (same URL, role, startup parameters or pooler
    // mode), and the pool's statements stay the requests' own (tests count them)
    const [row] = await sendOn(source.stateSql, safetyCheck(source.stateSql));
    const problems = [
      ...(row?.read_only !== 'on' ? ['writable (transaction_read_only is off)'] : []),
      ...(row?.statement_timeout === '0' ? ['without statement_timeout'] : []),
    ];
    source.problems = problems;
    source.safety = problems.length ? 'unsafe' : 'safe';
    if (source.role === 'primary' && row?.in_recovery) {
      // nothing to measure its lag against: the standby's own staleness goes unseen
      logger.warn({ source: source.label },
        'DATABASE_URL is a standby: its lag cannot be measured; give the primary as DATABASE_URL and the standby in DATABASE_READ_URLS');
    }
    if (problems.length === 0) return;
    const hint = pooled
      ? 'check the pooler and the role settings'
      : 'behind a transaction pooler set DB_POOLER=pgbouncer, or give the role default_transaction_read_only=on and a statement_timeout';
    if (options.allowUnsafeSession) {
      logger.warn({ source: source.name, server: source.label, problems }, `database session is ${problems.join(' and ')}: serving anyway (DB_ALLOW_UNSAFE_SESSION=true)`);
    } else {
      logger.error({ source: source.name, server: source.label, problems },
        `database session is ${problems.join(' and ')}: refusing to serve from ${source.label} (${hint}; DB_ALLOW_UNSAFE_SESSION=true overrides)`);
    }
  }

  /** The session checks, until they have run once: safety, then (without DB_POOLER) whether a transaction pooler is in front. */
  async function checkSession(source: Member) {
    if (source.sessionChecked) return;
    await checkSafety(source);
    if (!pooled && await behindTransactionPooler(() => source.open(2), stateReadMs)) {
      source.refusal = poolerRefusal(source);
      logger.error({ source: source.name, server: source.label },
        `${source.refusal}: statements of one connection are answered by different server sessions; refusing to serve from it (set DB_POOLER=pgbouncer)`);
    }
    source.sessionChecked = true;
  }

  async function checkReplica(source: Member) {
    try {
      await within(checkSession(source), stateReadMs, 'session check');
      const state = await within(readSnapshot(source.stateSql), stateReadMs, 'replica state read');
      source.setSnapshot(state);
      source.reachable = true;
      if (source.refusal) return outOfRotation(source, source.refusal);
      if (source.safety === 'unsafe' && !options.allowUnsafeSession) return outOfRotation(source, 'unsafe session');
      const lag = lagOf(source);
      if (!fresh(source)) {
        return outOfRotation(source, lag === null ? 'lag unknown (not at a data version seen on the primary)' : 'lagging');
      }
      if (!source.inRotation) logger.info({ replica: source.name, server: source.label, lagMs: lag }, 'replica in rotation');
      if (lag === null || lag > options.maxLagMs) {
        logger.warn({ replica: source.name, server: source.label }, 'primary unreachable: serving from a replica at the last data version it showed');
      }
      source.inRotation = true;
      source.reason = undefined;
    } catch (error) {
      if (stopped) return;
      source.reachable = false;
      const startup = !pooled && refusesStartupParameters(error);
      outOfRotation(source, startup ? startupParametersRefused : 'unreachable');
      logger.debug({ replica: source.name, err: (error as Error).message }, 'replica check failed');
    }
  }

  // each replica is read on its own: one that does not answer (its state read waits for a lock replay
  // holds, a network stall) must not hold up the others' checks, and leaves the rotation once it has
  // not answered for longer than the lag budget
  const checking = new Map<Member, number>();
  function checkOnce(replica: Member): Promise<void> {
    const since = checking.get(replica);
    if (since !== undefined) {
      if (Date.now() - since > options.maxLagMs) outOfRotation(replica, 'not answering');
      return Promise.resolve();
    }
    checking.set(replica, Date.now());
    return checkReplica(replica).finally(() => checking.delete(replica));
  }

  async function tick(wait: boolean) {
    if (!primary.sessionChecked) await within(checkSession(primary), stateReadMs, 'session check').catch(() => {});
    if (replicas.length === 0) return;
    // the primary's version first (bounded by one poll): replicas read right after it are proven fresh as of it
    await Promise.race([watcher.refresh(), new Promise((r) => setTimeout(r, options.pollMs).unref())]);
    const checks = Promise.all(replicas.map(checkOnce));
    if (wait) await checks;
  }

  const usable = (s: Member) => s.refusal === null && (s.safety !== 'unsafe' || options.allowUnsafeSession);
  const servable = (s: Member) => usable(s) && (s.role === 'primary' || (s.inRotation && fresh(s)));

  // the pins of requests in flight (scopes are collected with their requests)
  const pins = new WeakMap<object, Pin>();
  let next = 0;
  function choose(): Pin {
    const live = replicas.filter(servable);
    const source = live.length ? live[next++ % live.length]! : primary;
    return { source, snapshot: source.snapshot() };
  }
  function pin(): Pin {
    const scope = (options.scope ?? noRequestScope).current();
    if (!scope || scope.primaryOnly) return { source: primary, snapshot: primary.snapshot() };
    let pinned = pins.get(scope);
    if (!pinned) pins.set(scope, pinned = choose());
    return pinned;
  }

  const atLeast = (candidate: Source, floor: DataSnapshot | null) => {
    if (candidate.role === 'primary' || floor === null) return true;
    const s = candidate.snapshot();
    return s !== null && s.epoch === floor.epoch && BigInt(s.version) >= BigInt(floor.version);
  };

  return {
    primary,
    replicas,
    watcher,
    primaryStateSql: primary.stateSql,
    router: {
      pin,
      pinned: () => pin().source,
      live: () => pin().source.snapshot(),
      retryTarget(failed) {
        const floor = pin().snapshot;
        const others = all.filter((s) => s !== failed && servable(s) && atLeast(s, floor));
        // never the same server again at once: its pool is busy replacing the lost connection, and a
        // server that refuses connections would only be asked twice
        return others[0] ?? null;
      },
    },
    stateReadMs,
    listenUp: () => watcher.listening() && listenWorks,
    unready() {
      if (primaryProblem) return primaryProblem;
      if (!all.some(servable)) {
        if (primary.refusal) return primary.refusal;
        if (primary.safety === 'unsafe' && !options.allowUnsafeSession) return unsafeReason(primary);
        return 'no database source can serve';
      }
      if (replicas.length && !replicas.some((r) => servable(r)) && watcher.failing()) {
        return 'no database source within the replica lag budget';
      }
      return null;
    },
    onVersionChange: (listener) => void listeners.push(listener),
    async start() {
      // every step is bounded, and start-up (and /readyz) waits for them all for one bound at most: it must
      // move on even when the server or a pooler in front never answers; what did not complete goes on
      // in the background or is retried by the loops
      const steps = (async () => {
        // the session first: what else is read from a session that will be refused does not matter
        await within(checkSession(primary), stateReadMs, 'session check').catch(() => {});
        await watcher.start();
        await within(probeListen(), stateReadMs + 2_000, 'LISTEN probe')
          .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'LISTEN probe failed'));
        await within(tick(true), stateReadMs, 'replica checks').catch(() => {});
      })();
      await within(steps, stateReadMs + 2_000, 'start-up')
        .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'database checks still running: serving meanwhile'));
      if (!stopped) {
        const loop = () => {
          timer = setTimeout(() => void tick(false).finally(() => !stopped && loop()), options.pollMs);
          timer.unref();
        };
        loop();
      }
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await watcher.stop();
      await Promise.all(all.flatMap((s) => [s.sql.end({ timeout: 5 }), s.stateSql.end({ timeout: 5 })]));
    },
  };
}

/**
 * postgres.js 3.x (pinned) sends a prepared statement the server says does not exist once more, prepared
 * anew, and keeps the first error as the Query's `retried`: a lost session that only luck hid.
 */
function watchRetry<T>(sent: Promise<T>, onLost: (error: unknown) => void): Promise<T> {
  return sent.then((rows) => {
    const retried = (sent as { retried?: unknown }).retried;
    if (retried && isSessionLost(retried)) onLost(retried);
    return rows;
  });
}

const startupParametersRefused = 'the server refuses startup parameters (a PgBouncer in front?): set DB_POOLER=pgbouncer';
const refusesStartupParameters = (error: unknown) => /unsupported startup parameter/i.test((error as Error)?.message ?? '');

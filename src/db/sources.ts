import type { Logger } from 'pino';
import { createSql, type RoutedSource, type Router, type Sql } from './client.js';
import { within } from './deadline.js';
import { ServiceUnavailableError, isConnectFailure } from './errors.js';
import { noRequestScope, type RequestScopeAccessor } from './scope.js';
import { hostLabel } from './urls.js';
import { createVersionWatcher, readSourceState, type DataSnapshot, type VersionWatcher } from './version.js';

// The servers the gateway reads from: the primary (DATABASE_URL) and the read replicas
// (DATABASE_READ_URLS). Each has its own query pool, its own admission gate (src/db/client.ts) and its
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
// Lag: each replica's data version is read every DATA_VERSION_POLL_MS. A replica whose version equals
// the primary's has nothing to catch up (lag 0, even if the primary has been idle for hours); one that
// is behind lags by the time since the primary first showed a newer version (as this gateway saw it),
// or, when that is not known, by the age of its last replayed transaction (pg_last_xact_replay_timestamp(),
// an upper bound). Over MAX_REPLICA_LAG_MS it leaves the rotation; it comes back once within it.

export interface SourcesOptions {
  primary: { url?: string; socketPath?: string };
  /** One URL per replica host (src/db/urls.ts expands lists and multi-host URLs). */
  replicas: string[];
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
  /** The query pool. */
  sql: Sql;
  /** Last data snapshot read from this server. */
  snapshot(): DataSnapshot | null;
  /** Replicas: ms behind the primary (null: unknown). The primary: 0. */
  lagMs: number | null;
  inRotation: boolean;
  /** Why a replica is out of rotation. */
  reason?: string;
  safety: Safety;
}

/** A source with what only this module touches: its state connection and where its snapshot is kept. */
type Member = Source & { stateSql: Sql; setSnapshot(snapshot: DataSnapshot): void };

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

/** Versions the primary showed, with when this gateway first saw each: how long a replica has been behind. */
interface Sighting {
  epoch: string;
  version: bigint;
  at: number;
}
const sightingsKeptMs = 15 * 60_000;
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
  const sightings: Sighting[] = [];
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // the bound on one state read or start-up check: a connection, then the state connection's statement
  // timeout (a misconfigured pooler can hold a statement for ever: src/db/deadline.ts)
  const stateReadMs = options.connectTimeoutS * 1_000 + stateStatementTimeoutMs;

  function makeSource(role: 'primary' | 'replica', target: { url?: string; socketPath?: string }): Member {
    const sql = createSql({ ...target, ...sqlOptions, poolMax: options.poolMax, onQuery: options.onQuery });
    // the state connection: version reads never queue behind the pool's statements
    const stateSql = createSql({ ...target, ...sqlOptions, statementTimeoutMs: stateStatementTimeoutMs, poolMax: 1 });
    let snapshot: DataSnapshot | null = null;
    const source: Member = {
      role,
      label: target.url ? hostLabel(target.url) : 'embedded',
      sql,
      stateSql,
      // the primary's is the watcher's, set as it changes (onChange below); a replica's, set by its check
      snapshot: () => snapshot,
      setSnapshot: (next) => void (snapshot = next),
      lagMs: role === 'primary' ? 0 : null,
      inRotation: role === 'primary',
      reason: role === 'replica' ? 'not checked yet' : undefined,
      safety: embedded ? 'safe' : 'unchecked',
      send<T>(query: PromiseLike<T>): Promise<T> {
        if (source.safety === 'unsafe' && !options.allowUnsafeSession) {
          return Promise.reject(new ServiceUnavailableError('unsafe database session (writable or without statement_timeout)'));
        }
        return sendOn(sql, query);
      },
      failed(error) {
        if (role === 'replica' && isConnectFailure(error)) outOfRotation(source, 'unreachable');
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
   * BEGIN and COMMIT.
   */
  function sendOn<T>(sql: Sql, query: PromiseLike<T>): Promise<T> {
    // postgres.js 3.x (pinned): a Query keeps `strings`, `args` and `options` and is sent on first await
    const q = query as unknown as {
      tagged: boolean; strings: TemplateStringsArray & string[]; args: unknown[]; options: object; handler: unknown; executed: boolean;
    };
    if (!Array.isArray(q.strings) || !Array.isArray(q.args)) throw new TypeError('not a postgres.js query');
    // built by the very Sql it goes out on (the store's statements on the primary) and not sent yet: as it is
    if (!pooled && !q.executed && q.handler === handlerOf(sql)) return query as Promise<T>;
    const reissue = (on: Sql) => (q.tagged
      ? on(q.strings, ...(q.args as never[]))
      : on.unsafe(q.strings[0]!, q.args as never[], q.options)) as unknown as Promise<T>;
    if (!pooled) return reissue(sql);
    return sql.begin('read only', (tx) => [
      tx`SELECT set_config('statement_timeout', ${String(options.statementTimeoutMs)}, true)`,
      reissue(tx as unknown as Sql),
    ]).then((results) => (results as unknown[])[1] as T);
  }

  const primary = makeSource('primary', options.primary);
  const replicas = options.replicas.map((url) => makeSource('replica', { url }));
  const all = [primary, ...replicas];

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
    onChange: (next, previous, via) => {
      primary.setSnapshot(next);
      sightings.push({ epoch: next.epoch, version: BigInt(next.version), at: Date.now() });
      while (sightings.length > 1 && sightings[0]!.at < Date.now() - sightingsKeptMs) sightings.shift();
      for (const listener of listeners) listener(next, previous, via);
    },
    onError: (error, where) => {
      const message = (error as Error).message;
      logger.warn({ where, err: message },
        where === 'listen' ? 'LISTEN failed: learning data versions by polling only' : 'cannot read the data version: answering without the cache');
      // PgBouncer refuses statement_timeout and default_transaction_read_only as startup parameters
      if (!pooled && /unsupported startup parameter/i.test(message)) {
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
    if (source.inRotation) logger.warn({ replica: source.label, reason, lagMs: source.lagMs }, 'replica out of rotation');
    source.inRotation = false;
    source.reason = reason;
  }

  /** ms `snapshot` is behind the primary; null when it cannot be told. */
  function lagOf(snapshot: DataSnapshot, replayAgeMs: number | null): number | null {
    const reference = watcher.current();
    if (!reference || reference.epoch !== snapshot.epoch) return null;
    const version = BigInt(snapshot.version);
    if (version >= BigInt(reference.version)) return 0;
    const firstNewer = sightings.find((s) => s.epoch === snapshot.epoch && s.version > version);
    // the primary's newer version was there before this gateway saw it: the replay age bounds the lag from above
    if (firstNewer && firstNewer !== sightings[0]) return Date.now() - firstNewer.at;
    return replayAgeMs ?? (firstNewer ? Date.now() - firstNewer.at : null);
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
      logger.warn({ source: source.label, problems }, `database session is ${problems.join(' and ')}: serving anyway (DB_ALLOW_UNSAFE_SESSION=true)`);
    } else {
      logger.error({ source: source.label, problems },
        `database session is ${problems.join(' and ')}: refusing to serve from ${source.label} (${hint}; DB_ALLOW_UNSAFE_SESSION=true overrides)`);
    }
  }

  async function checkReplica(source: Member) {
    try {
      await within(checkSafety(source), stateReadMs, 'safety check');
      const state = await within(readSourceState(source.stateSql), stateReadMs, 'replica state read');
      source.setSnapshot(state);
      source.lagMs = lagOf(state, state.replayAgeMs);
      if (source.safety === 'unsafe' && !options.allowUnsafeSession) return outOfRotation(source, 'unsafe session');
      if (source.lagMs === null) return outOfRotation(source, 'lag unknown (primary not read yet, or another database)');
      if (source.lagMs > options.maxLagMs) return outOfRotation(source, 'lagging');
      if (!source.inRotation) logger.info({ replica: source.label, lagMs: source.lagMs }, 'replica in rotation');
      source.inRotation = true;
      source.reason = undefined;
    } catch (error) {
      if (stopped) return;
      source.lagMs = null;
      outOfRotation(source, 'unreachable');
      logger.debug({ replica: source.label, err: (error as Error).message }, 'replica check failed');
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
    if (primary.safety === 'unchecked') await checkSafety(primary).catch(() => {});
    const checks = Promise.all(replicas.map(checkOnce));
    if (wait) await checks;
  }

  // the pins of requests in flight (scopes are collected with their requests)
  const pins = new WeakMap<object, Pin>();
  let next = 0;
  function choose(): Pin {
    const live = replicas.filter((r) => r.inRotation && r.snapshot() !== null);
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
        const usable = (s: Source) => s.safety !== 'unsafe' || options.allowUnsafeSession;
        const others = [primary, ...replicas.filter((r) => r.inRotation)].filter((s) => s !== failed && usable(s) && atLeast(s, floor));
        // never the same server again at once: its pool is busy replacing the lost connection, and a
        // server that refuses connections would only be asked twice
        return others[0] ?? null;
      },
    },
    stateReadMs,
    listenUp: () => watcher.listening() && listenWorks,
    unready() {
      const servable = all.filter((s) => s.inRotation && (s.safety !== 'unsafe' || options.allowUnsafeSession));
      if (servable.length === 0) return 'unsafe database session (writable or without statement_timeout)';
      if (replicas.length && !replicas.some((r) => r.inRotation) && watcher.failing()) {
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
        // the session's safety first: what else is read from a session that will be refused does not matter
        await within(checkSafety(primary), stateReadMs, 'safety check').catch(() => {});
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

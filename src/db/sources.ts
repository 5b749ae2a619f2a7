import type { Logger } from 'pino';
import { createSql, type Sql } from './client.js';
import type { RoutedSource, Router } from './statement-runner.js';
import { within } from './deadline.js';
import { primaryHistory, type PrimaryHistory } from './freshness.js';
import { listenDelivers } from './listen-probe.js';
import { createSessionChecks, unsafeReason, type CheckedSource, type Safety } from './session-checks.js';
import { createSender, createSourceRouter, sourceSending, type Pin, type SendOn } from './source-routing.js';
import { hostLabel } from '../domain/database-urls.js';
import { createVersionWatcher, readSnapshot, type DataSnapshot, type VersionWatcher } from './version.js';

// The servers the gateway reads from: the primary (DATABASE_URL) and the read replicas
// (DATABASE_READ_URLS). Each has its own query pool, its own admission gate (src/db/semaphore.ts) and its
// own connection for state reads.
//
// Routing is per request (src/db/source-routing.ts): a request is pinned to one source and the data snapshot
// it had then, so every statement sees data at least as new as the version its answer is stored under.
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
// Session checks: src/db/session-checks.ts.

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
}

export interface Source extends RoutedSource {
  role: 'primary' | 'replica';
  /** Its name in metrics: `primary`, or a replica's configured name (default: its position, from 0). */
  name: string;
  /** The query pool. */
  sql: Sql;
  /** Last data snapshot read from this server (a value, not a call: every request's pin reads it). */
  snapshot: DataSnapshot | null;
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

/** A source with what only this module touches: its state connection, its session checks. */
type Member = Source & CheckedSource & {
  reachable: boolean;
};

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
    pin(): Pin<Source>;
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

const stateStatementTimeoutMs = 5_000;

export function createSources(options: SourcesOptions): Sources {
  const { logger } = options;
  const pooled = options.pooler === 'pgbouncer';
  const embedded = options.primary.socketPath !== undefined;
  const listeners: VersionListener[] = [];
  const history = primaryHistory();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  // the bound on one state read or start-up check: a connection, then the state connection's statement
  // timeout (a misconfigured pooler can hold a statement for ever: src/db/deadline.ts)
  const stateReadMs = options.connectTimeoutS * 1_000 + stateStatementTimeoutMs;
  const names = replicaNames(options);
  const sendOn = createSender({ pooled, statementTimeoutMs: options.statementTimeoutMs });
  // read only once serving (after the watcher below is built)
  const rotation = createRotation({ logger, history, maxLagMs: options.maxLagMs, failing: () => watcher.failing() });
  const checks = createSessionChecks<Member>({
    pooled, allowUnsafeSession: options.allowUnsafeSession, stateReadMs, logger, sendOn, outOfRotation: rotation.outOfRotation,
  });
  const member = { options, embedded, sendOn, rotation, sessionLost: checks.sessionLost };
  const primary = makeSource('primary', options.primary, 'primary', member);
  const replicas = options.replicas.map((url, i) => makeSource('replica', { url }, names[i]!, member));
  const all = [primary, ...replicas];
  // the last connection failure of the primary that names a fix (null: none, or it answers)
  let primaryProblem: string | null = null;
  const watcher = primaryWatcher(primary, {
    options, pooled, embedded, stateReadMs, history, listeners, problem: (problem) => void (primaryProblem = problem),
  });
  let listenWorks = true;
  async function probeListen() {
    if (!watcher.listening()) return;
    listenWorks = await listenDelivers(primary.stateSql);
    if (!listenWorks) {
      logger.warn({ pollMs: options.pollMs },
        'LISTEN is accepted but notifications do not arrive (a transaction pooler in front? set DB_POOLER=pgbouncer): learning data versions by polling only');
    }
  }
  const usable = (s: Member) => s.refusal === null && (s.safety !== 'unsafe' || options.allowUnsafeSession);
  const servable = (s: Member) => usable(s) && (s.role === 'primary' || (s.inRotation && rotation.fresh(s)));
  const tick = replicaChecks({ options, pooled, stateReadMs, primary, replicas, watcher, rotation, checks, stopped: () => stopped });

  return {
    primary,
    replicas,
    watcher,
    primaryStateSql: primary.stateSql,
    router: createSourceRouter<Member>({ primary, replicas, servable }),
    stateReadMs,
    listenUp: () => watcher.listening() && listenWorks,
    unready: () => primaryProblem || unservable(primary, replicas, servable, options.allowUnsafeSession, watcher),
    onVersionChange: (listener) => void listeners.push(listener),
    async start() {
      await startUp({ logger, stateReadMs, checkSession: () => checks.checkSession(primary), watcher, probeListen, tick });
      if (stopped) return;
      const loop = () => {
        timer = setTimeout(() => void tick(false).finally(() => !stopped && loop()), options.pollMs);
        timer.unref();
      };
      loop();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await watcher.stop();
      await Promise.all(all.flatMap((s) => [s.sql.end({ timeout: 5 }), s.stateSql.end({ timeout: 5 })]));
    },
  };
}

type VersionListener = Parameters<Sources['onVersionChange']>[0];

/**
 * Start-up's steps. Every step is bounded, and start-up (and /readyz) waits for them all for one bound at
 * most: it must move on even when the server or a pooler in front never answers; what did not complete goes
 * on in the background or is retried by the loops.
 */
async function startUp(o: {
  logger: Logger; stateReadMs: number; checkSession: () => Promise<unknown>; watcher: VersionWatcher;
  probeListen: () => Promise<void>; tick: (first: boolean) => Promise<unknown>;
}): Promise<void> {
  const { logger, stateReadMs } = o;
  const steps = (async () => {
    // the session first: what else is read from a session that will be refused does not matter
    await within(o.checkSession(), stateReadMs, 'session check').catch(() => {});
    await o.watcher.start();
    await within(o.probeListen(), stateReadMs + 2_000, 'LISTEN probe')
      .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'LISTEN probe failed'));
    await within(o.tick(true), stateReadMs, 'replica checks').catch(() => {});
  })();
  await within(steps, stateReadMs + 2_000, 'start-up')
    .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'database checks still running: serving meanwhile'));
}

/** Why no source can serve, or why the replicas cannot (null: the sources can serve). */
function unservable(primary: Member, replicas: Member[], servable: (s: Member) => boolean, allowUnsafeSession: boolean,
  watcher: VersionWatcher): string | null {
  if (![primary, ...replicas].some(servable)) {
    if (primary.refusal) return primary.refusal;
    if (primary.safety === 'unsafe' && !allowUnsafeSession) return unsafeReason(primary);
    return 'no database source can serve';
  }
  if (replicas.length && !replicas.some((r) => servable(r)) && watcher.failing()) {
    return 'no database source within the replica lag budget';
  }
  return null;
}

function replicaNames(options: SourcesOptions): string[] {
  const names = options.replicaNames ?? options.replicas.map((_, i) => String(i));
  if (names.length !== options.replicas.length) {
    throw new Error(`DATABASE_READ_NAMES: ${names.length} names for ${options.replicas.length} replicas`);
  }
  return names;
}

type Rotation = ReturnType<typeof createRotation>;

/** Replicas in and out of rotation, and the proof of their freshness (the head of this file). */
function createRotation(o: { logger: Logger; history: PrimaryHistory; maxLagMs: number; failing: () => boolean }) {
  function outOfRotation(source: Source, reason: string) {
    if (source.inRotation) o.logger.warn({ replica: source.name, server: source.label, reason, lagMs: source.lagMs }, 'replica out of rotation');
    source.inRotation = false;
    source.reason = reason;
  }

  /** The proven bound on how far `source` (a replica) is behind the primary now, in ms; null when unknown. */
  function lagOf(source: Member): number | null {
    const snapshot = source.snapshot;
    if (!source.reachable || !snapshot) return null;
    const at = o.history.provenAt(snapshot);
    return at === null ? null : Math.max(0, performance.now() - at);
  }

  /** Whether answers may come from `source` (a replica) now; the one exception: see the head of this file. */
  function fresh(source: Member): boolean {
    const lag = lagOf(source);
    if (lag !== null && lag <= o.maxLagMs) return true;
    const snapshot = source.snapshot;
    return source.reachable && snapshot !== null && o.failing() && o.history.atLatest(snapshot);
  }

  return { outOfRotation, lagOf, fresh };
}

function makeSource(role: 'primary' | 'replica', target: { url?: string; socketPath?: string }, name: string, ctx: {
  options: SourcesOptions; embedded: boolean; sendOn: SendOn; rotation: Rotation; sessionLost: (source: Member, error: unknown) => void;
}): Member {
  const { options, rotation } = ctx;
  const sqlOptions = {
    statementTimeoutMs: options.statementTimeoutMs, connectTimeoutS: options.connectTimeoutS, readOnly: true, pooler: options.pooler,
  } as const;
  const sql = createSql({ ...target, ...sqlOptions, poolMax: options.poolMax, onQuery: options.onQuery });
  // the state connection: version reads never queue behind the pool's statements
  const stateSql = createSql({ ...target, ...sqlOptions, statementTimeoutMs: stateStatementTimeoutMs, poolMax: 1 });
  const fields: Omit<Member, 'send' | 'failed'> = {
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
    snapshot: null,
    get lagMs() {
      return role === 'primary' ? 0 : rotation.lagOf(source);
    },
    inRotation: role === 'primary',
    reason: role === 'replica' ? 'not checked yet' : undefined,
    safety: ctx.embedded ? 'safe' : 'unchecked',
    refusal: null,
    poolerErrors: 0,
    reachable: role === 'primary',
    sessionChecked: ctx.embedded,
    problems: [],
  };
  // how a statement is sent on it, and what its failure says about it: src/db/source-routing.ts
  const source: Member = Object.assign(fields, sourceSending<Member>(fields as Member, {
    allowUnsafeSession: options.allowUnsafeSession, sendOn: ctx.sendOn, unsafeReason, fresh: rotation.fresh,
    outOfRotation: rotation.outOfRotation, sessionLost: ctx.sessionLost,
  }));
  return source;
}

/** The primary's data-version watcher: LISTEN where it can work, polling always. */
function primaryWatcher(primary: Member, ctx: {
  options: SourcesOptions; pooled: boolean; embedded: boolean; stateReadMs: number; history: PrimaryHistory;
  listeners: VersionListener[]; problem: (problem: string | null) => void;
}): VersionWatcher {
  const { options, pooled } = ctx;
  const { logger } = options;
  if (options.listen && pooled) {
    logger.warn({ pooler: options.pooler, pollMs: options.pollMs },
      'LISTEN cannot work behind a transaction pooler (DB_POOLER=pgbouncer): learning data versions by polling only');
  }
  // the embedded engine's socket server accepts LISTEN but delivers no notifications: poll only
  return createVersionWatcher(primary.stateSql, {
    pollMs: options.pollMs,
    readTimeoutMs: ctx.stateReadMs,
    listen: options.listen && !ctx.embedded && !pooled,
    onRead: (snapshot, sentAt) => {
      ctx.history.read(snapshot, sentAt);
      ctx.problem(null);
    },
    onChange: (next, previous, via) => {
      primary.snapshot = next;
      for (const listener of ctx.listeners) listener(next, previous, via);
    },
    onError: (error, where) => {
      const message = (error as Error).message;
      logger.warn({ where, err: message },
        where === 'listen' ? 'LISTEN failed: learning data versions by polling only' : 'cannot read the data version: answering without the cache');
      // PgBouncer refuses statement_timeout and default_transaction_read_only as startup parameters
      if (!pooled && refusesStartupParameters(error)) {
        ctx.problem(startupParametersRefused);
        logger.error({ err: message }, 'the server refuses startup parameters: behind PgBouncer set DB_POOLER=pgbouncer');
      }
    },
  });
}

/** One round of the replicas' checks, after the primary's version (and its session, until checked). */
function replicaChecks(ctx: {
  options: SourcesOptions; pooled: boolean; stateReadMs: number; primary: Member; replicas: Member[]; watcher: VersionWatcher;
  rotation: Rotation; checks: { checkSession(source: Member): Promise<void> }; stopped: () => boolean;
}): (wait: boolean) => Promise<void> {
  const { options, stateReadMs, rotation } = ctx;
  const { logger } = options;

  async function checkReplica(source: Member) {
    try {
      await within(ctx.checks.checkSession(source), stateReadMs, 'session check');
      const state = await within(readSnapshot(source.stateSql), stateReadMs, 'replica state read');
      source.snapshot = state;
      source.reachable = true;
      if (source.refusal) return rotation.outOfRotation(source, source.refusal);
      if (source.safety === 'unsafe' && !options.allowUnsafeSession) return rotation.outOfRotation(source, 'unsafe session');
      const lag = rotation.lagOf(source);
      if (!rotation.fresh(source)) {
        return rotation.outOfRotation(source, lag === null ? 'lag unknown (not at a data version seen on the primary)' : 'lagging');
      }
      if (!source.inRotation) logger.info({ replica: source.name, server: source.label, lagMs: lag }, 'replica in rotation');
      if (lag === null || lag > options.maxLagMs) {
        logger.warn({ replica: source.name, server: source.label }, 'primary unreachable: serving from a replica at the last data version it showed');
      }
      source.inRotation = true;
      source.reason = undefined;
    } catch (error) {
      if (ctx.stopped()) return;
      source.reachable = false;
      const startup = !ctx.pooled && refusesStartupParameters(error);
      rotation.outOfRotation(source, startup ? startupParametersRefused : 'unreachable');
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
      if (Date.now() - since > options.maxLagMs) rotation.outOfRotation(replica, 'not answering');
      return Promise.resolve();
    }
    checking.set(replica, Date.now());
    return checkReplica(replica).finally(() => checking.delete(replica));
  }

  return async function tick(wait: boolean) {
    if (!ctx.primary.sessionChecked) await within(ctx.checks.checkSession(ctx.primary), stateReadMs, 'session check').catch(() => {});
    if (ctx.replicas.length === 0) return;
    // the primary's version first (bounded by one poll): replicas read right after it are proven fresh as of it
    await Promise.race([ctx.watcher.refresh(), new Promise((r) => setTimeout(r, options.pollMs).unref())]);
    const checks = Promise.all(ctx.replicas.map(checkOnce));
    if (wait) await checks;
  };
}

const startupParametersRefused = 'the server refuses startup parameters (a PgBouncer in front?): set DB_POOLER=pgbouncer';
const refusesStartupParameters = (error: unknown) => /unsupported startup parameter/i.test((error as Error)?.message ?? '');

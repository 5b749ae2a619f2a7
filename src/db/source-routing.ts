import type { Sql } from './client.js';
import { ReplicaBehindError, ServiceUnavailableError, isConnectFailure, isSessionLost } from './errors.js';
import type { RoutedSource } from './statement-runner.js';
import { currentScope } from '../request/scope.js';
import type { DataSnapshot } from './version.js';

// Where a request's statements go: the source it is pinned to (createSourceRouter), and how a statement is
// sent on a source (sourceSending over createSender's sendOn).
//
// Routing is per request, not per statement: a request is pinned, at its first use, to one source in
// rotation (replicas round robin, the primary when none is) together with the data snapshot that source
// had then; a statement retried elsewhere goes only to a source at least as new (the primary always is).

interface RoutableSource extends RoutedSource {
  role: 'primary' | 'replica';
  /** The last data snapshot read from it. */
  readonly snapshot: DataSnapshot | null;
}

export interface Pin<S> {
  source: S;
  snapshot: DataSnapshot | null;
}

export function createSourceRouter<S extends RoutableSource>(options: {
  primary: S;
  replicas: S[];
  /** Whether a source may serve now (safe, and for a replica in rotation and fresh). */
  servable(source: S): boolean;
}) {
  const { primary, replicas, servable } = options;
  const all = [primary, ...replicas];
  // the pins of requests in flight (scopes are collected with their requests)
  const pins = new WeakMap<object, Pin<S>>();
  let next = 0;
  function choose(): Pin<S> {
    const live = replicas.filter(servable);
    const source = live.length ? live[next++ % live.length]! : primary;
    return { source, snapshot: source.snapshot };
  }
  function pin(): Pin<S> {
    const scope = currentScope();
    if (!scope || scope.primaryOnly) return { source: primary, snapshot: primary.snapshot };
    let pinned = pins.get(scope);
    if (!pinned) pins.set(scope, pinned = choose());
    return pinned;
  }
  return {
    /** The current request's pin (chosen now if it has none): its source and that source's snapshot. */
    pin,
    pinned: () => pin().source,
    /** The pinned source's latest known snapshot (the cache refuses to store once it has moved on). */
    live: () => pin().source.snapshot,
    retryTarget(failed: RoutedSource): S | null {
      const floor = pin().snapshot;
      const others = all.filter((s) => s !== failed && servable(s) && atLeast(s, floor));
      // never the same server again at once: its pool is busy replacing the lost connection, and a
      // server that refuses connections would only be asked twice
      return others[0] ?? null;
    },
  };
}

function atLeast(candidate: RoutableSource, floor: DataSnapshot | null): boolean {
  if (candidate.role === 'primary' || floor === null) return true;
  const s = candidate.snapshot;
  return s !== null && s.epoch === floor.epoch && BigInt(s.version) >= BigInt(floor.version);
}

/**
 * Sends `query` (built by any Sql instance of this process: postgres.js queries are their template
 * strings and arguments until awaited) on `sql`. Behind a transaction pooler each statement runs in
 * its own read-only transaction with statement_timeout set for it: session settings do not survive
 * there, transaction settings do. The setting and the statement are pipelined (one round trip), plus
 * BEGIN and COMMIT. Without DB_POOLER, `onLost` hears of a prepared statement the driver found missing
 * and prepared again on its own (a transaction pooler in front: the answer came, but only by luck).
 */
export type SendOn = <T>(sql: Sql, query: PromiseLike<T>, onLost?: (error: unknown) => void) => Promise<T>;

export function createSender(options: { pooled: boolean; statementTimeoutMs: number }): SendOn {
  // postgres.js 3.x: a Query holds the handler of the Sql instance that built it (the one it is sent through)
  const handlers = new WeakMap<Sql, unknown>();
  function handlerOf(sql: Sql): unknown {
    let handler = handlers.get(sql);
    if (handler === undefined) handlers.set(sql, (handler = (sql`SELECT 1` as unknown as { handler: unknown }).handler));
    return handler;
  }

  return function sendOn<T>(sql: Sql, query: PromiseLike<T>, onLost?: (error: unknown) => void): Promise<T> {
    // postgres.js 3.x (pinned): a Query keeps `strings`, `args` and `options` and is sent on first await
    const q = query as unknown as {
      tagged: boolean; strings: TemplateStringsArray & string[]; args: unknown[]; options: object; handler: unknown; executed: boolean;
    };
    if (!Array.isArray(q.strings) || !Array.isArray(q.args)) throw new TypeError('not a postgres.js query');
    // built by the very Sql it goes out on (the store's statements on the primary) and not sent yet: as it is
    const reissue = (on: Sql) => (q.tagged
      ? on(q.strings, ...(q.args as never[]))
      : on.unsafe(q.strings[0]!, q.args as never[], q.options)) as unknown as Promise<T>;
    if (!options.pooled) {
      const sent = !q.executed && q.handler === handlerOf(sql) ? query as Promise<T> : reissue(sql);
      return onLost ? watchRetry(sent, onLost) : sent;
    }
    return sql.begin('read only', (tx) => [
      tx`SELECT set_config('statement_timeout', ${String(options.statementTimeoutMs)}, true)`,
      reissue(tx as unknown as Sql),
    ]).then((results) => (results as unknown[])[1] as T);
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

/** What sending on a source reads of it (src/db/sources.ts keeps it current). */
export interface SendingSource {
  role: 'primary' | 'replica';
  sql: Sql;
  /** Why it is refused outright, or null. */
  refusal: string | null;
  safety: 'unchecked' | 'safe' | 'unsafe';
}

/** The sources' rules a send follows and what it tells them (src/db/sources.ts, src/db/session-checks.ts). */
export interface SendingRules<S> {
  allowUnsafeSession: boolean;
  sendOn: SendOn;
  unsafeReason(source: S): string;
  /** Whether a replica is within the lag budget now. */
  fresh(source: S): boolean;
  outOfRotation(source: S, reason: string): void;
  sessionLost(source: S, error: unknown): void;
}

/**
 * A source's `send` and `failed` (src/db/statement-runner.ts RoutedSource): a statement goes out only on a
 * source that is not refused, safe (or allowed unsafe) and, for a replica, fresh at this very moment; a
 * failure takes a replica out of rotation or reports a lost session.
 */
export function sourceSending<S extends SendingSource>(source: S, rules: SendingRules<S>) {
  return {
    send<T>(query: PromiseLike<T>): Promise<T> {
      if (source.refusal) return Promise.reject(new ServiceUnavailableError(source.refusal));
      if (source.safety === 'unsafe' && !rules.allowUnsafeSession) return Promise.reject(new ServiceUnavailableError(rules.unsafeReason(source)));
      // the budget holds at the moment of reading, not only at the last check
      if (source.role === 'replica' && !rules.fresh(source)) return Promise.reject(new ReplicaBehindError());
      return rules.sendOn(source.sql, query, (error) => rules.sessionLost(source, error));
    },
    failed(error: unknown): void {
      if (isSessionLost(error)) return rules.sessionLost(source, error);
      if (source.role !== 'replica') return;
      if (error instanceof ReplicaBehindError) rules.outOfRotation(source, 'lagging');
      else if (isConnectFailure(error)) rules.outOfRotation(source, 'unreachable');
    },
  };
}

import type { Sql } from './client.js';
import { ReplicaBehindError, ServiceUnavailableError, isConnectFailure, isSessionLost } from './errors.js';

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

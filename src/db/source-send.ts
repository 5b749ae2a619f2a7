import type { Sql } from './client.js';
import { isSessionLost } from './errors.js';

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

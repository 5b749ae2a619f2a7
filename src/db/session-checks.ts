import type { Logger } from 'pino';
import type { Sql } from './client.js';
import { behindTransactionPooler } from './pooler-probe.js';
import type { SendOn } from './source-routing.js';

// A source's session checks: a session that is writable or has no statement timeout is unsafe (refused
// unless DB_ALLOW_UNSAFE_SESSION); a transaction pooler in front of a server without DB_POOLER=pgbouncer
// (src/db/pooler-probe.ts at start, or a prepared statement lost while serving) is refused outright: its
// prepared statements would fail under load.

export type Safety = 'unchecked' | 'safe' | 'unsafe';

/** What the checks read and set on a source. */
export interface CheckedSource {
  role: 'primary' | 'replica';
  name: string;
  label: string;
  stateSql: Sql;
  /** A fresh client like the pool's (the pooler probe's own connections). */
  open(poolMax: number): Sql;
  safety: Safety;
  refusal: string | null;
  poolerErrors: number;
  sessionChecked: boolean;
  /** What the safety check found wrong (empty: nothing, or not checked yet). */
  problems: string[];
}

export interface SessionCheckOptions<S extends CheckedSource> {
  pooled: boolean;
  allowUnsafeSession: boolean;
  stateReadMs: number;
  logger: Logger;
  sendOn: SendOn;
  /** Takes a replica out of rotation, saying why. */
  outOfRotation(source: S, reason: string): void;
}

const safetyCheck = (sql: Sql) => sql<{ read_only: string; statement_timeout: string; in_recovery: boolean }[]>`
  SELECT current_setting('transaction_read_only') AS read_only, current_setting('statement_timeout') AS statement_timeout,
         pg_is_in_recovery() AS in_recovery`;

export const unsafeReason = (source: CheckedSource) => `unsafe database session on ${source.name}: ${source.problems.join(' and ')}`;
const poolerRefusal = (source: CheckedSource) => `transaction pooler in front of ${source.name} without DB_POOLER=pgbouncer`;

export function createSessionChecks<S extends CheckedSource>(options: SessionCheckOptions<S>) {
  const { logger, pooled } = options;

  async function checkSafety(source: CheckedSource) {
    if (source.safety !== 'unchecked') return;
    // on the state connection: opened like the pool's (same URL, role, startup parameters or pooler
    // mode), and the pool's statements stay the requests' own (tests count them)
    const [row] = await options.sendOn(source.stateSql, safetyCheck(source.stateSql));
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

  return {
    /** The session checks, until they have run once: safety, then (without DB_POOLER) whether a transaction pooler is in front. */
    async checkSession(source: S) {
      if (source.sessionChecked) return;
      await checkSafety(source);
      if (!pooled && await behindTransactionPooler(() => source.open(2), options.stateReadMs)) {
        source.refusal = poolerRefusal(source);
        logger.error({ source: source.name, server: source.label },
          `${source.refusal}: statements of one connection are answered by different server sessions; refusing to serve from it (set DB_POOLER=pgbouncer)`);
      }
      source.sessionChecked = true;
    },
    /** A prepared statement vanished between two statements of one connection: a transaction pooler. */
    sessionLost(source: S, error: unknown) {
      source.poolerErrors++;
      if (pooled || source.refusal) return;
      source.refusal = poolerRefusal(source);
      if (source.role === 'replica') options.outOfRotation(source, source.refusal);
      logger.error({ source: source.name, server: source.label, err: (error as Error).message },
        `${source.refusal}: its prepared statements are lost between statements; refusing to serve from it (set DB_POOLER=pgbouncer)`);
    },
  };
}

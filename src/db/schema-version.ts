import type { Logger } from 'pino';
import type { Sql } from './client.js';
import { within } from './deadline.js';
import { describeUnavailable, isConnectFailure, ServiceUnavailableError } from './errors.js';
import { listMigrations } from './migrate.js';

// Whether the database schema is at the version this build expects: every migration it ships (sql/) is
// recorded in schema_migrations. Until it is, the gateway is not ready (/readyz 503 with the reason), so a
// rollout whose new pods start before the migrations ran (a Kubernetes Deployment applied with its
// migrate Job) keeps serving from the old pods instead of answering from a schema older than the code.
// Migrations are additive: a database ahead of the build (the next version migrated while this one still
// serves) is ready. Checked until it passes, then never again (a schema does not go back).

export interface SchemaCheckOptions {
  /** The primary's state connection (never a replica's: migrations run on the primary). */
  sql: Sql;
  /** The migrations this build ships: default the sql/ directory beside the code. */
  expected?: string[];
  /** Between checks while the schema is behind. @default 1000 */
  intervalMs?: number;
  /** Bound on one check. */
  readMs: number;
  logger: Logger;
}

const runMigrations = 'run the migrations: npm run db:migrate, or the migrate Job / service';

export function createSchemaCheck(options: SchemaCheckOptions) {
  const expected = options.expected ?? listMigrations().map((m) => m.version);
  let reason: string | null = 'database schema not checked yet';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function check(): Promise<void> {
    let next: string | null;
    try {
      const rows = await within(options.sql<{ version: string }[]>`
        SELECT version FROM schema_migrations`, options.readMs, 'schema check');
      const applied = new Set(rows.map((r) => r.version));
      const missing = expected.filter((v) => !applied.has(v));
      next = missing.length === 0 ? null
        : `database schema behind this build: ${missing.length} of ${expected.length} migrations not applied (${missing[0]}${missing.length > 1 ? ', …' : ''}); ${runMigrations}`;
    } catch (error) {
      // 42P01: no schema_migrations table, nothing was ever migrated. Not known yet because the database
      // cannot be reached: that is the reason (as the readiness ping would say it). Else the last state.
      if ((error as { code?: string }).code === '42P01') next = `database schema not migrated (no schema_migrations table); ${runMigrations}`;
      else if (reason !== null && (isConnectFailure(error) || error instanceof ServiceUnavailableError)) next = describeUnavailable(error);
      else return;
    }
    // (an unreachable database is logged by the sources, not here)
    if (next !== reason && next === null) options.logger.info({ migrations: expected.length }, 'database schema at this build\'s version');
    if (next !== reason && next?.startsWith('database schema')) options.logger.warn({ reason: next }, 'not ready: database schema');
    reason = next;
  }

  function loop(): void {
    if (stopped || reason === null) return;
    timer = setTimeout(() => void check().finally(loop), options.intervalMs ?? 1_000);
    timer.unref();
  }

  return {
    /** Why the gateway must not serve yet (null: the schema is at this build's version). */
    unready: () => reason,
    /** The first check (bounded); later ones run in the background until the schema is there. */
    async start(): Promise<void> {
      await check();
      loop();
    },
    stop(): void {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

export type SchemaCheck = ReturnType<typeof createSchemaCheck>;

import type { TestOptions } from 'vitest';

// A test or suite that cannot run on this machine is skipped with its reason, and the reason is printed at
// the end of the run (test/support/skip-reporter.ts): nothing is switched off silently. Use the options as
// `describe(name, skipUnless(…), fn)` / `it(name, skipUnless(…), fn)`, or `ctx.skip(condition, reason)`.

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test or suite was skipped (printed by the skip reporter). */
    skipReason?: string;
  }
}

/** Skipped when `condition` is falsy, with `reason` (what is missing) as the note the skip reporter prints. */
export function skipUnless(condition: unknown, reason: string): TestOptions {
  return skipUnlessAll([condition, reason]);
}

/** Skipped unless every condition holds; the note names the reason of each one that does not. */
export function skipUnlessAll(...checks: [condition: unknown, reason: string][]): TestOptions {
  const reasons = checks.filter(([condition]) => !condition).map(([, reason]) => reason);
  return reasons.length ? { skip: true, meta: { skipReason: reasons.join('; ') } } : {};
}

/** Skipped when `missing` lists anything, naming what is missing. */
export function skipIfMissing(missing: readonly string[]): TestOptions {
  return skipUnless(missing.length === 0, `missing: ${missing.join(', ')}`);
}

/** The reasons the suite's skips give, so that one cause reads the same everywhere. */
export const because = {
  noServer: 'needs a PostgreSQL server (only the embedded engine is available)',
  noServerForChild: 'the child process needs a PostgreSQL server it can reach (only the embedded engine is available)',
  noNotify: 'the embedded engine delivers no notifications (LISTEN/NOTIFY)',
  noStartupParameters: 'the embedded engine ignores startup parameters (default_transaction_read_only)',
  noMariadb: 'needs MariaDB binaries (mariadbd) for a private binlog server',
  noRedis: 'needs a Redis at REDIS_URL or 127.0.0.1:6379',
  noChromium: 'needs /usr/bin/chromium',
  noPgBin: 'needs PostgreSQL server binaries (initdb, pg_ctl) for a private instance',
  noPgbouncer: 'needs the pgbouncer binary',
} as const;

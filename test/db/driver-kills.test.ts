import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSql } from '../../src/db/client.js';
import { within } from '../../src/db/deadline.js';
import { ServiceUnavailableError } from '../../src/db/errors.js';
import { findServer } from '../support/db.js';
import { because, skipUnless } from '../support/skips.js';

// Two defects of postgres.js 3.4.9 when a server ends a connection (patches/postgres+3.4.9.patch):
// - the timer of a write scheduled before the close was kept, so the reconnect's StartupMessage was never
//   flushed and the connection waited for connect_timeout (the ~2.2 s "recovery" cases of
//   test/db/outages.test.ts);
// - statements pipelined on it were not failed when the close came with an error, and waited for ever on
//   the next connection (the gateway's own timer answered "query timed out" after 4 s).
// Here the gateway's client options, statements pipelined from 6 callers on 4 connections, and the pool's
// backends terminated 25 times: every failure must be the kill itself, at once.

const server = await findServer();

describe('the driver when its backends are terminated under load', skipUnless(server, because.noServer), () => {
  const sql = server ? createSql({ url: server, poolMax: 4, statementTimeoutMs: 3_000, connectTimeoutS: 2, readOnly: true }) : undefined;
  const admin = server ? postgres(server, { max: 1, onnotice: () => {} }) : undefined;

  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await admin?.end({ timeout: 5 });
  });

  it('reconnects at once and fails what was in flight: every failure is the kill itself, none a stall', async () => {
    let running = true;
    let ok = 0;
    const failures = new Map<string, number>();
    const caller = async () => {
      while (running) {
        try {
          await within(sql!`SELECT ${ok}::int AS n, pg_sleep(0.003), current_setting('application_name') AS app`, 5_000, 'statement');
          ok++;
        } catch (error) {
          const code = error instanceof ServiceUnavailableError ? 'STALLED' : (error as { code?: string }).code ?? 'other';
          failures.set(code, (failures.get(code) ?? 0) + 1);
        }
      }
    };
    const callers = Array.from({ length: 6 }, caller);
    let killed = 0;
    for (let round = 0; round < 25; round++) {
      await new Promise((resolve) => setTimeout(resolve, 150 + (round % 5) * 60));
      const rows = await admin!<{ pid: number }[]>`
        SELECT pg_terminate_backend(pid) AS pid FROM pg_stat_activity
        -- other gateways of the suite share the application name: this pool's backends are the ones in
        -- this database running this statement
        WHERE application_name = 'inscription-gateway' AND datname = current_database()
          AND query LIKE '%pg_sleep(0.003)%' AND pid <> pg_backend_pid()`;
      killed += rows.length;
    }
    running = false;
    await Promise.all(callers);
    // 57P01 (terminated), CONNECTION_CLOSED and the socket's errors are the kills; a CONNECT_TIMEOUT or a
    // statement unanswered for 5 s is the driver stalling
    expect(failures.get('CONNECT_TIMEOUT') ?? 0, JSON.stringify([...failures])).toBe(0);
    expect(failures.get('STALLED') ?? 0, JSON.stringify([...failures])).toBe(0);
    expect([...failures.keys()].every((code) => ['57P01', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'EPIPE'].includes(code)),
      JSON.stringify([...failures])).toBe(true);
    expect(killed).toBeGreaterThan(25);
    expect(ok).toBeGreaterThan(200);
  }, 60_000);
});

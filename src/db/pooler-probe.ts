import type { Sql } from './client.js';
import { within } from './deadline.js';

// Is a transaction pooler (PgBouncer's pool_mode = transaction, or statement) in front of a server the
// gateway was told it reaches directly? Behind one, the statements of one client connection land on
// whichever server session is free, so prepared statements and session settings vanish between them
// ("prepared statement … does not exist" under load). A server session cannot tell; what can is which
// server process answers: on a direct connection (or behind a session pooler) every statement of one
// client connection is answered by the same backend, pg_backend_pid().
//
// The probe: connection A asks for its backend; connection B opens a transaction and asks for its own
// (a transaction pooler hands B a free server session, usually the one A just released: PgBouncer reuses
// the most recent first); A asks again while B holds its transaction. A second answer from another
// backend, or B answered by A's backend, is a pooler. Another client of the same pooler releasing a
// session at the wrong moment can hand A its own backend back, so the probe runs a few rounds (the first
// sign ends it); what it still misses, the prepared statements lost while serving show
// (src/db/session-checks.ts). Statements without parameters, never prepared: they work through any pooler.

const pidQuery = 'SELECT pg_backend_pid() AS pid';
/** How long A's second question may wait for a server session while B holds one (a pooler with one server). */
const heldWaitMs = 1_000;
/** Rounds of the probe at most (it stops at the first sign of a pooler). */
const rounds = 5;

/** True when a transaction pooler is in front; false when every statement of a connection kept its backend. */
export async function behindTransactionPooler(open: () => Sql, boundMs: number): Promise<boolean> {
  const sql = open();
  try {
    return await within(probe(sql), boundMs, 'pooler probe');
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

type Reserved = Awaited<ReturnType<Sql['reserve']>>;

async function probe(sql: Sql): Promise<boolean> {
  const a = await sql.reserve();
  const b = await sql.reserve();
  try {
    for (let i = 0; i < rounds; i++) if (await round(a, b)) return true;
    return false;
  } finally {
    a.release();
    b.release();
  }
}

async function round(a: Reserved, b: Reserved): Promise<boolean> {
  const pid = async (on: Reserved) => (await on.unsafe<{ pid: number }[]>(pidQuery, [], { prepare: false }))[0]!.pid;
  const first = await pid(a);
  await b.unsafe('BEGIN', [], { prepare: false });
  try {
    const held = await pid(b);
    const again = pid(a);
    // a pooler with a single server session answers A only once B's transaction ends (B got A's session,
    // which `held` shows): B does not wait for A for ever
    await Promise.race([again.catch(() => {}), new Promise((r) => setTimeout(r, heldWaitMs).unref())]);
    await b.unsafe('ROLLBACK', [], { prepare: false });
    const second = await again;
    return held === first || second !== first;
  } catch (error) {
    await b.unsafe('ROLLBACK', [], { prepare: false }).catch(() => {});
    throw error;
  }
}

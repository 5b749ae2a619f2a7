import type { Sql } from './client.js';

const listenProbeChannel = 'igw_listen_probe';

/**
 * Whether a notification sent on `sql` reaches its own LISTEN: LISTEN can be accepted and still never
 * deliver (behind a transaction pooler it ran on a server session that has since gone back to the pool).
 */
export async function listenDelivers(sql: Sql): Promise<boolean> {
  const token = Math.random().toString(36).slice(2);
  let heard!: () => void;
  const arrived = new Promise<void>((resolve) => (heard = resolve));
  const probe = await sql.listen(listenProbeChannel, (payload) => payload === token && heard());
  try {
    // no parameters: postgres.js sends a statement with parameters as Parse/Describe/Flush first and
    // waits for the description, a reply a transaction pooler in front can lose (see deadline.ts);
    // both values are ours ([a-z_0-9])
    await sql.unsafe(`SELECT pg_notify('${listenProbeChannel}', '${token}')`);
    return await Promise.race([arrived.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2_000).unref())]);
  } finally {
    await probe.unlisten().catch(() => {});
  }
}

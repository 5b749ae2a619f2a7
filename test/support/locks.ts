import type { Sql } from '../../src/db/client.js';

/**
 * Holds an ACCESS EXCLUSIVE lock on `table` from another session until `release` is called: the gateway's
 * statements on it wait, each holding a pool connection (timeouts, pool and queue limits).
 */
export async function lockTable(sql: Sql, table: string): Promise<{ pid: number; release(): Promise<void> }> {
  let release!: () => void;
  let locked!: (pid: number) => void;
  const isLocked = new Promise<number>((resolve) => { locked = resolve; });
  const done = sql.begin(async (tx) => {
    await tx.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const [row] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
    locked(row!.pid);
    await new Promise<void>((resolve) => { release = resolve; });
  });
  const pid = await isLocked;
  return { pid, async release() { release(); await done; } };
}

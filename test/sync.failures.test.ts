import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyChunksInto } from '../src/db/copy.js';
import { createTestDatabase, findServer, type TestDatabase } from './support/db.js';
import { createSourceDatabase, IndexerWriter, type SourceDb } from './support/indexer.js';
import { startSyncProcess } from './support/sync-process.js';

// Every failure ends (issue 25, D1): a row the read model refuses never hangs the sync. Before, a COPY the
// server failed after its last chunk was sent waited for ever (postgres.js resolves the COPY with its stream
// and drops the error), the session `idle in transaction (aborted)`, `--once` never returning.

const server = await findServer();

describe.skipIf(!server)('sync: failures end the run', () => {
  let db: TestDatabase;
  let src: SourceDb;

  beforeAll(async () => {
    db = await createTestDatabase();
    src = await createSourceDatabase();
  });
  afterAll(async () => {
    await src?.close();
    await db?.close();
  });

  it('a COPY the server fails after its last chunk rejects with the server error', async () => {
    const client = postgres(db.target.url!, { max: 1, onnotice: () => {} });
    try {
      const r = await client.reserve();
      await r`CREATE TEMP TABLE copy_fail (k text PRIMARY KEY)`;
      await r`BEGIN`;
      const copy = copyChunksInto(r as never, 'copy_fail', ['k'], [Buffer.from('a\na\n')]);
      const outcome = await Promise.race([copy.then(() => 'resolved', (e: { code?: string }) => e.code),
        new Promise((resolve) => setTimeout(() => resolve('hung'), 10_000))]);
      expect(outcome).toBe('23505');
      await r`ROLLBACK`;
      // the connection is usable afterwards
      expect((await r`SELECT 1 AS one`)[0]!.one).toBe(1);
      r.release();
    } finally {
      await client.end({ timeout: 1 });
    }
  }, 30_000);

  it('a backfill whose COPY is refused names the source row and exits non-zero within seconds', async () => {
    const w = new IndexerWriter(src.conn, 0);
    w.deploy({ chain: 'eth', protocol: 'erc-20', tick: 'zebra' });
    w.deploy({ chain: 'eth', protocol: 'erc-20', tick: 'ZEBRA' });
    await w.flush('eth');
    const [rows] = await src.conn.query('SELECT id FROM inscriptions WHERE tick = ? COLLATE utf8mb4_bin', ['ZEBRA']);
    const upperId = String((rows as { id: number }[])[0]!.id);
    const sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--once', '--mode', 'polling']);
    const started = Date.now();
    const exit = await Promise.race([sync.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 45_000))]);
    await sync.kill();
    expect(exit, sync.output().slice(-3000)).not.toBeNull();
    expect(exit!.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(45_000);
    const line = sync.output().split('\n').find((l) => /"table":"inscriptions"/.test(l) && /"level":50/.test(l));
    expect(line, sync.output().slice(-3000)).toBeDefined();
    const logged = JSON.parse(line!) as { id: string; column: string };
    expect(logged.id).toBe(upperId);
    expect(logged.column).toMatch(/tick/);
    // nothing is left waiting in an aborted transaction
    const stuck = await db.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
      AND state LIKE 'idle in transaction%'`;
    expect(stuck[0]!.n).toBe(0);
  }, 90_000);
});

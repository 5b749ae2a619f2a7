import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultServerId } from '../../src/sync/run.js';
import { createTestDatabase, findServer, type TestDatabase } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { createSourceDatabase, IndexerWriter, type SourceDb, useSourceDatabase } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { freePort } from '../support/ports.js';
import { startSyncProcess, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnless, skipUnlessAll } from '../support/skips.js';

// A refused connection is one REFUSED line; --dry-run checks the target; the binlog server id is unique by
// default and a clash is refused or retried; updatedAt of rows the indexer inserts is read in
// --source-time-zone.

const server = await findServer();

async function run(args: string[], ms = 45_000): Promise<{ code: number | null; output: string }> {
  const sync = startSyncProcess(args);
  const exit = await Promise.race([sync.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
  await sync.kill();
  return { code: exit ? exit.code : null, output: sync.output() };
}
/** No stack trace in the output (a JSON log line's err.stack, or a raw one). */
const noStack = (output: string) => !/"stack"|\n\s+at /.test(output);

/** One refused run: what is wrong, the arguments that meet it, the REFUSED line expected. */
interface Refusal { refused: string; args: () => string[]; line: () => RegExp }

describe('sync: refusals', skipUnless(server, because.noServerForChild), () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  let admin: postgres.Sql;
  let closedPort = 0;
  // a role that may log in and nothing else, and an empty database whose public schema it may not create in
  const role = `igw_ro_${process.pid}`;
  const empty = `igw_empty_${process.pid}`;

  beforeAll(async () => {
    closedPort = await freePort();
    admin = postgres(new URL('/postgres', db.target.url!).toString(), { max: 1, onnotice: () => {} });
    await admin.unsafe(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.unsafe(`CREATE ROLE ${role} LOGIN`);
    await admin.unsafe(`CREATE DATABASE ${empty}`);
  });
  afterAll(async () => {
    await admin?.unsafe(`DROP DATABASE IF EXISTS ${empty} WITH (FORCE)`).catch(() => {});
    await admin?.unsafe(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin?.end({ timeout: 1 });
  });

  /** The test database's URL with one part changed. */
  const target = (change: (u: URL) => void = () => {}) => { const u = new URL(db.target.url!); change(u); return u.toString(); };
  const wrongPassword = () => src.url.replace('mysql://root@', 'mysql://root:wrong-password@');
  const sourceDenied = /^REFUSED +the source refused: Access denied for user 'root'.*\(ER_ACCESS_DENIED_ERROR\)$/m;

  const refusals: Refusal[] = [
    { refused: 'a wrong source password (--dry-run)', args: () => ['--source', wrongPassword(), '--database-url', target(), '--dry-run'], line: () => sourceDenied },
    { refused: 'a wrong source password (--once)', args: () => ['--source', wrongPassword(), '--database-url', target(), '--once'], line: () => sourceDenied },
    {
      refused: 'a closed target port',
      args: () => ['--source', src.url, '--database-url', target((u) => { u.port = String(closedPort); }), '--dry-run'],
      line: () => /^REFUSED +the target is unreachable: .*ECONNREFUSED/m,
    },
    {
      refused: 'a missing target database',
      args: () => ['--source', src.url, '--database-url', target((u) => { u.pathname = '/igw_no_such_database'; }), '--dry-run'],
      line: () => /^REFUSED +the target refused: database "igw_no_such_database" does not exist \(3D000\)$/m,
    },
    {
      refused: 'a missing target role',
      args: () => ['--source', src.url, '--database-url', target((u) => { u.username = 'igw_no_such_role'; }), '--dry-run'],
      line: () => /^REFUSED +the target refused: role "igw_no_such_role" does not exist \(28000\)$/m,
    },
    {
      refused: 'a target role that may not write the migrated read model',
      args: () => ['--source', src.url, '--database-url', target((u) => { u.username = role; }), '--dry-run'],
      line: () => new RegExp(`^REFUSED +the target role ${role} on database \\S+ may not write the read model's tables`, 'm'),
    },
    {
      refused: 'a target role that may not CREATE in an empty database (PostgreSQL 15+)',
      args: () => ['--source', src.url, '--database-url', target((u) => { u.username = role; u.pathname = `/${empty}`; }), '--dry-run'],
      line: () => new RegExp(`^REFUSED +the target role ${role} on database ${empty} may not CREATE in schema public`, 'm'),
    },
  ];

  it.for(refusals)('$refused: exit 1, one REFUSED line, no stack trace', { timeout: 120_000 }, async ({ args, line }) => {
    const r = await run(args());
    expect(r.code, r.output).toBe(1);
    expect(r.output).toMatch(line());
    expect(noStack(r.output), r.output).toBe(true);
  });

  it('--dry-run against a reachable, writable target exits 0', async () => {
    const r = await run(['--source', src.url, '--database-url', target(), '--dry-run']);
    expect(r.code, r.output).toBe(0);
  }, 120_000);
});

describe('sync: updatedAt of inserted rows', skipUnless(server, because.noServerForChild), () => {
  const db = useDatabase();
  const src = useSourceDatabase();

  it('reads an inserted tick\'s and balance\'s updated_at in --source-time-zone, a database-stamped one as UTC', async () => {
    const w = new IndexerWriter(src.conn, 8 * 60);
    const t = { chain: 'eth', protocol: 'erc-20', tick: 'clock' };
    const alice = '0x00000000000000000000000000000000000000a1';
    const bob = '0x00000000000000000000000000000000000000b0';
    w.deploy(t).mint(t, alice, '1').mint(t, bob, '1');
    await w.flush('eth');
    w.mint(t, bob, '1'); // an update: the database stamps updated_at (its clock, UTC here)
    await w.flush('eth');
    const r = await run(['--source', src.url, '--database-url', db.target.url!, '--once', '--mode', 'polling', '--source-time-zone', '+08:00']);
    expect(r.code, r.output).toBe(0);
    const [tick] = await db.sql`SELECT created_at, updated_at FROM ticks`;
    expect(tick!.updated_at.toISOString()).toBe(tick!.created_at.toISOString());
    const near = (d: Date) => Math.abs(d.getTime() - Date.now()) < 10 * 60_000;
    const balances = await db.sql`SELECT address_key, updated_at FROM balances ORDER BY 1`;
    expect(balances.map((b) => [b.address_key, near(b.updated_at)])).toEqual([[alice, true], [bob, true]]);
  }, 90_000);
});

describe('sync: the default --server-id', () => {
  it('is derived from the target: the same for one read model, another for another', () => {
    const a = defaultServerId('postgres://igw@db1:5432/igw');
    expect(defaultServerId('postgres://igw@db1:5432/igw')).toBe(a);
    expect(defaultServerId('postgres://igw@db2:5432/igw')).not.toBe(a);
    expect(defaultServerId('postgres://igw@db1:5432/igw2')).not.toBe(a);
    expect(a).toBeGreaterThanOrEqual(1_000_000);
    expect(a).toBeLessThanOrEqual(4_294_967_295);
  });
});

describe('sync: two syncs on one source', { timeout: 180_000, ...skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]) }, () => {
  let maria: MariaInstance;
  let src: SourceDb;
  let dbs: TestDatabase[] = [];
  const syncs: SyncProcess[] = [];

  beforeAll(async () => {
    maria = await startMariaInstance(4501);
    src = await createSourceDatabase({ host: maria.host, port: maria.port, user: maria.user });
    dbs = [await createTestDatabase(), await createTestDatabase()];
  }, 120_000);
  afterAll(async () => {
    for (const s of syncs) await s.kill();
    await src?.close();
    for (const d of dbs) await d.close();
    await maria?.destroy();
  });

  it('the preflight refuses a --server-id the source itself has', async () => {
    const r = await run(['--source', src.url, '--database-url', dbs[0]!.target.url!, '--dry-run', '--mode', 'binlog', '--server-id', '4501']);
    expect(r.code, r.output).toBe(1);
    expect(r.output).toMatch(/^REFUSED +--server-id 4501 is the source server's own server_id/m);
  }, 60_000);

  it('two syncs into two read models follow the same source side by side with their default ids', async () => {
    const w = new IndexerWriter(src.conn, 0);
    const t = { chain: 'eth', protocol: 'erc-20', tick: 'twin' };
    w.deploy(t).mint(t, '0x00000000000000000000000000000000000000a1', '1');
    await w.flush('eth');
    for (const d of dbs) syncs.push(startSyncProcess(['--source', src.url, '--database-url', d.target.url!, '--mode', 'binlog']));
    const count = (d: TestDatabase) => d.sql`SELECT count(*)::int AS n FROM transactions`.then((r) => r[0]!.n as number).catch(() => 0);
    for (const d of dbs) await waitFor(async () => (await count(d)) === 2, 60_000, 'the backfills');
    for (let i = 0; i < 3; i++) {
      w.mint(t, '0x00000000000000000000000000000000000000a1', '1');
      await w.flush('eth');
      await new Promise((r) => setTimeout(r, 700));
    }
    for (const d of dbs) {
      await waitFor(async () => (await count(d)) === 5, 30_000, 'the follows').catch((error) => {
        throw new Error(`${(error as Error).message}\n${syncs.map((s) => s.output().slice(-2000)).join('\n---\n')}`);
      });
    }
    for (const s of syncs) {
      expect(s.child.exitCode, s.output().slice(-2000)).toBeNull();
      expect(s.output()).not.toMatch(/same --server-id|same server_uuid/);
    }
    for (const s of syncs.splice(0)) await s.kill('SIGTERM');
  }, 150_000);

  it('two syncs given the same --server-id: the one the source drops retries instead of exiting', async () => {
    const w = new IndexerWriter(src.conn, 0);
    const t = { chain: 'eth', protocol: 'erc-20', tick: 'twin' };
    for (const d of dbs) syncs.push(startSyncProcess(['--source', src.url, '--database-url', d.target.url!, '--mode', 'binlog', '--server-id', '7777']));
    await waitFor(async () => syncs.some((s) => /another replica uses the same --server-id; retrying/.test(s.output())), 60_000, 'the clash')
      .catch((error) => { throw new Error(`${(error as Error).message}\n${syncs.map((s) => s.output().slice(-2000)).join('\n---\n')}`); });
    w.mint(t, '0x00000000000000000000000000000000000000a1', '1');
    await w.flush('eth');
    const count = (d: TestDatabase) => d.sql`SELECT count(*)::int AS n FROM transactions`.then((r) => r[0]!.n as number).catch(() => 0);
    // the flush reaches both read models, each follow taking its turn on the source
    for (const d of dbs) await waitFor(async () => (await count(d)) === 6, 60_000, 'both read models');
    for (const s of syncs) expect(s.child.exitCode, s.output().slice(-2000)).toBeNull();
  }, 150_000);
});

import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/access/key-format.js';
import { createKeyRegistry, type KeyRegistry } from '../../src/access/registry.js';
import { insertApiKey, revokeApiKey } from '../../src/db/api-keys.js';
import { createSql, type Sql } from '../../src/db/client.js';
import { because } from '../support/skips.js';
import { useDatabase } from '../support/gateway.js';

// The gateway's key registry on real PostgreSQL: read with a read-only session (as the gateway's role),
// a change made on the admin connection reaches two running registries through NOTIFY within 2 s, and a
// registry that cannot LISTEN picks it up by its periodic reload.

const readers: Sql[] = [];
const registries: KeyRegistry[] = [];

function reader(): Sql {
  const sql = createSql({ ...db.target, poolMax: 1, statementTimeoutMs: 5_000, connectTimeoutS: 5, readOnly: true });
  readers.push(sql);
  return sql;
}

async function registry(listen: boolean, reloadMs = 60_000): Promise<KeyRegistry> {
  const r = createKeyRegistry({ sql: reader(), listen, reloadMs });
  registries.push(r);
  await r.start();
  return r;
}

async function until(check: () => boolean, ms: number): Promise<number> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - start;
}

const newKey = async (name: string, extra: Partial<Parameters<typeof insertApiKey>[1]> = {}) => {
  const g = generateKey();
  await insertApiKey(db.sql, { name, prefix: g.prefix, secretSha256: g.secretSha256, ratePerS: 5, burst: 10, ...extra });
  return g;
};

const db = useDatabase();

afterAll(async () => {
  for (const r of registries) await r.stop();
  for (const sql of readers) await sql.end({ timeout: 5 });
});

describe('the key registry', () => {
  it('stores only the SHA-256 of the secret, never the key', async () => {
    const g = await newKey('stored');
    const [row] = await db.sql<{ prefix: string; secret_sha256: Buffer }[]>`SELECT prefix, secret_sha256 FROM api_keys WHERE name = 'stored'`;
    const secret = g.key.slice(12);
    expect(row!.prefix).toBe(g.prefix);
    expect(Buffer.from(row!.secret_sha256).equals(createHash('sha256').update(secret).digest())).toBe(true);
    const dump = JSON.stringify(await db.sql`SELECT * FROM api_keys`);
    expect(dump).not.toContain(secret);
  });

  it('answers valid, unknown (wrong secret, unknown prefix, not a key), revoked and expired keys', async () => {
    const g = await newKey('lookup', { maxPageSize: 5_000, maxCost: 1_000_000, maxStreams: 50, dailyAllowance: 100 });
    const expired = await newKey('lookup-expired');
    await db.sql`UPDATE api_keys SET expires_at = now() - interval '1 s' WHERE name = 'lookup-expired'`;
    const r = await registry(db.engine === 'server');
    const found = r.lookup(g.key);
    expect(found).toMatchObject({
      status: 'valid',
      key: { name: 'lookup', prefix: g.prefix, limits: { ratePerS: 5, burst: 10, dailyAllowance: 100 }, overrides: { maxPageSize: 5_000, maxCost: 1_000_000, maxStreams: 50 } },
    });
    const other = generateKey();
    expect(r.lookup(`${g.prefix}_${other.key.slice(12)}`)).toEqual({ status: 'unknown', prefix: g.prefix });
    expect(r.lookup(other.key)).toEqual({ status: 'unknown', prefix: other.prefix });
    expect(r.lookup('hello')).toEqual({ status: 'unknown', prefix: null });
    expect(r.lookup(expired.key)).toEqual({ status: 'expired', prefix: expired.prefix, name: 'lookup-expired' });
    await revokeApiKey(db.sql, 'lookup');
    await r.reload();
    expect(r.lookup(g.key)).toEqual({ status: 'revoked', prefix: g.prefix, name: 'lookup' });
  });

  it('reaches two running registries within 2 s of a create and of a revoke (NOTIFY)', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noNotify);
    const a = await registry(true);
    const b = await registry(true);
    await until(() => a.listening() && b.listening(), 5_000);
    const g = await newKey('notified');
    const seen = await Promise.all([until(() => a.lookup(g.key).status === 'valid', 2_000), until(() => b.lookup(g.key).status === 'valid', 2_000)]);
    await revokeApiKey(db.sql, 'notified');
    const revoked = await Promise.all([until(() => a.lookup(g.key).status === 'revoked', 2_000), until(() => b.lookup(g.key).status === 'revoked', 2_000)]);
    expect(Math.max(...seen, ...revoked)).toBeLessThan(2_000);
  });

  it('without LISTEN, picks a change up by its periodic reload', async () => {
    const r = await registry(false, 200);
    const g = await newKey('polled');
    await until(() => r.lookup(g.key).status === 'valid', 2_000);
    await db.sql`DELETE FROM api_keys WHERE name = 'polled'`;
    await until(() => r.lookup(g.key).status === 'unknown', 2_000);
  });

  it('reads with a read-only session (the gateway cannot change a key)', async (ctx) => {
    ctx.skip(db.engine === 'embedded', because.noStartupParameters);
    const sql = reader();
    await expect(sql`UPDATE api_keys SET revoked_at = now()`).rejects.toMatchObject({ code: '25006' });
  });

  it('answers "unavailable" before the keys could ever be read, never "unknown"', async () => {
    const broken = createSql({ url: 'postgres://postgres@127.0.0.1:1/none', poolMax: 1, statementTimeoutMs: 1_000, connectTimeoutS: 1, readOnly: true });
    readers.push(broken);
    const errors: string[] = [];
    const r = createKeyRegistry({ sql: broken, listen: false, reloadMs: 60_000, readTimeoutMs: 2_000, onError: (_e, where) => errors.push(where) });
    registries.push(r);
    await r.start();
    expect(errors).toEqual(['read']);
    expect(r.lookup(generateKey().key).status).toBe('unavailable');
  });
});

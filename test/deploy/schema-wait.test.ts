import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway } from '../../src/app.js';
import { createSql, type Sql } from '../../src/db/client.js';
import { listMigrations, migrate } from '../../src/db/migrate.js';
import { findServer } from '../support/db.js';
import { because, skipUnless } from '../support/skips.js';
import { buildTestGateway } from '../support/gateway.js';

// Rollouts wait for the schema: a gateway whose database has not (yet) been migrated to the version its
// build ships answers /readyz 503 with the exact reason, so an orchestrator keeps it out of service
// (Kubernetes keeps the old pods of a rolling update serving; compose's healthcheck keeps the load balancer
// waiting) until the migrations ran; then it becomes ready by itself, without a restart.

const base = await findServer();
const all = listMigrations();

async function readyz(gateway: Gateway): Promise<{ status: number; body: { status: string; reason?: string } }> {
  const { port } = gateway.server.address() as AddressInfo;
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return { status: res.status, body: await res.json() as { status: string; reason?: string } };
}

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last = await what();
  while (!ok(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    last = await what();
  }
  return last;
}

describe('readiness waits for the schema', skipUnless(base, because.noServer), () => {
  const name = `igw_test_schema_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: postgres.Sql;
  let owner: Sql;
  let gateway: Gateway;
  let partialDir = '';

  beforeAll(async () => {
    admin = postgres(base!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(base!);
    url.pathname = `/${name}`;
    owner = createSql({ url: url.toString(), poolMax: 1, statementTimeoutMs: 120_000, connectTimeoutS: 10, readOnly: false });
    // a gateway on a database nobody migrated yet (its pod started before the migrate Job ran)
    gateway = buildTestGateway({ target: { url: url.toString() } }, { DATA_VERSION_POLL_MS: 200 }).gateway;
    await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
    await gateway.ready;
    // the previous release's schema: every migration but the newest
    partialDir = mkdtempSync(join(tmpdir(), 'igw-sql-'));
    for (const m of all.slice(0, -1)) symlinkSync(m.file, join(partialDir, `${m.version}.sql`));
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await owner?.end({ timeout: 5 });
    await admin?.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin?.end({ timeout: 5 });
    if (partialDir) rmSync(partialDir, { recursive: true, force: true });
  });

  it('not migrated at all: 503 naming the missing schema and what to run', async () => {
    const { status, body } = await readyz(gateway);
    expect(status).toBe(503);
    expect(body).toEqual({
      status: 'unavailable',
      reason: 'database schema not migrated (no schema_migrations table); run the migrations: npm run db:migrate, or the migrate Job / service',
    });
  });

  it('migrated to the previous release: 503 naming the first missing migration', async () => {
    await migrate(owner, partialDir);
    const newest = all.at(-1)!.version;
    const { status, body } = await until(() => readyz(gateway), (r) => r.body.reason?.includes(newest) ?? false, 10_000);
    expect(status).toBe(503);
    expect(body.reason).toBe(`database schema behind this build: 1 of ${all.length} migrations not applied (${newest}); run the migrations: npm run db:migrate, or the migrate Job / service`);
  });

  it('once the migrations ran: ready by itself (no restart), and it stays ready', async () => {
    expect(await migrate(owner)).toEqual([all.at(-1)!.version]);
    const ready = await until(() => readyz(gateway), (r) => r.status === 200, 10_000);
    expect(ready.status).toBe(200);
    expect(ready.body.status).toBe('ready');
    // a database ahead of this build (the next release migrated first) is still this build's schema
    await owner`INSERT INTO schema_migrations (version) VALUES ('999_next_release')`;
    await new Promise((r) => setTimeout(r, 1_500));
    expect((await readyz(gateway)).status).toBe(200);
  });
});

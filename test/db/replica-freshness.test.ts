import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/app.js';
import { createSql, type Sql } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { Fixture } from '../support/fixtures.js';
import { waitFor } from '../support/ops.js';
import { createPgInstance, pgBinDir, type PgInstance } from '../support/pg-instance.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';
import { because, skipUnless } from '../support/skips.js';
import { useGateways } from '../support/gateway.js';

// Never older than the budget: a real primary and streaming standby of this file's own, a writer that
// bumps one value on the primary all the time, and clients asking two gateways for it back to back.
// Each write's acknowledgement time is known, so each answer's age is known: an answer holding write n
// while write n+1 had been acknowledged more than MAX_REPLICA_LAG_MS before the request was even sent is
// too old. The standby goes through what operators do to it: replay paused (it falls behind while still
// answering), a restart with nothing replayed since (recovery_min_apply_delay holds its replay back), a
// gateway started right then, and a normal restart (it catches up and comes back into rotation).
// Skipped where the PostgreSQL server binaries are not installed.

const bin = pgBinDir();
const budgetMs = 1_500;
const supplyQuery = 'query S($n: Int) { tick(chain: "eth", protocol: "erc-20", tick: "alpha") { totalSupply } ticks(first: $n) { totalCount } }';

interface Answer { gateway: string; phase: string; sent: number; received: number; value: number; cache: string | null }

describe('replica freshness: never older than MAX_REPLICA_LAG_MS (own primary and streaming standby)', skipUnless(bin, because.noPgBin), () => {
  let primary: PgInstance;
  let standby: PgInstance;
  let writer: Sql;
  let redis: OwnRedis;
  const figures: string[] = [];
  const gateways = useGateways({ get target() { return { url: primary.url }; } }, { CACHE: true, DATA_VERSION_POLL_MS: 500, MAX_REPLICA_LAG_MS: budgetMs });
  /** A gateway on the primary reading from the standby. */
  const startGateway = (overrides: Partial<GatewayConfig> = {}) => gateways({ DATABASE_READ_URLS: standby.url, ...overrides });

  beforeAll(async () => {
    primary = await createPgInstance();
    await primary.start();
    writer = createSql({ url: primary.url, poolMax: 2, statementTimeoutMs: 60_000, connectTimeoutS: 10, readOnly: false });
    await migrate(writer);
    const fixture = new Fixture();
    fixture.tick({ chain: 'eth', protocol: 'erc-20', tick: 'alpha', total_supply: '1000' });
    await fixture.load(writer);
    standby = await createPgInstance({ standbyOf: primary });
    await standby.start();
    redis = await startRedis();
  }, 120_000);

  afterAll(async () => {
    await gateways.closeAll().catch(() => {});
    await writer?.end({ timeout: 5 });
    await redis?.stop();
    await standby?.destroy();
    await primary?.destroy();
    if (figures.length) console.info(`[replicas.freshness]\n  ${figures.join('\n  ')}`);
  }, 60_000);


  it('replay paused, standby restarted with nothing replayed, a gateway started then: no answer older than the budget leaves a gateway or its cache', async () => {
    // the writer: one acknowledged write after another; acks[n] is when total_supply = n was acknowledged
    const acks = new Map<number, number>([[1000, 0]]);
    let writing = true;
    let paused: Promise<void> | null = null;
    const writes = (async () => {
      for (let next = 1001; writing; next++) {
        await paused;
        await writer`UPDATE ticks SET total_supply = ${String(next)} WHERE tick = 'alpha'`;
        acks.set(next, performance.now());
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    /** Runs `work` with the writer held (between two writes). */
    const withoutWrites = async (work: () => Promise<void>) => {
      let resume!: () => void;
      paused = new Promise((r) => (resume = r));
      await new Promise((r) => setTimeout(r, 50));
      try {
        await work();
      } finally {
        paused = null;
        resume();
      }
    };

    const answers: Answer[] = [];
    let phase = 'streaming';
    const clients: Promise<void>[] = [];
    let asking = true;
    const ask = (name: string, base: string) => {
      for (let c = 0; c < 3; c++) {
        clients.push((async () => {
          for (let i = 0; asking; i++) {
            const sent = performance.now();
            const response = await fetch(`${base}/graphql`, {
              method: 'POST', headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ query: supplyQuery, variables: { n: 1 + ((i + c) % 4) } }),
            });
            const json = await response.json() as { data?: { tick: { totalSupply: string } }; errors?: unknown };
            if (!json.data) throw new Error(`${name}: ${JSON.stringify(json)}`);
            answers.push({
              gateway: name, phase, sent, received: performance.now(), value: Number(json.data.tick.totalSupply), cache: response.headers.get('x-cache'),
            });
          }
        })());
      }
    };
    const during = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const seen = { inRotationWhileStreaming: false, behindBy: 0, replayed: null as Date | null, staleKeys: [] as string[], allKeys: [] as string[] };
    const phases = async () => {
      const early = await startGateway();
      await waitFor(async () => early.gateway.sources.replicas[0]!.inRotation, 5_000, 20);
      ask('early', early.base);
      await during(1_500);
      seen.inRotationWhileStreaming = early.gateway.sources.replicas[0]!.inRotation;

      phase = 'replay paused';
      const onStandby = postgres(standby.url, { max: 1, onnotice: () => {} });
      await onStandby`SELECT pg_wal_replay_pause()`;
      await during(3_000);

      phase = 'standby restarted behind';
      // a restart point on the standby with no commit after it (replayed at start-up, commits before the
      // consistent point would be applied at once), then writes it has not replayed when it comes back
      await withoutWrites(async () => {
        await onStandby`SELECT pg_wal_replay_resume()`;
        await writer`CHECKPOINT`;
        const lsn = (await writer<{ lsn: string }[]>`SELECT pg_current_wal_lsn()::text AS lsn`)[0]!.lsn;
        await waitFor(async () => (await onStandby<{ done: boolean }[]>`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS done`)[0]!.done, 15_000, 20);
        await onStandby`CHECKPOINT`;
        await onStandby`SELECT pg_wal_replay_pause()`;
        await onStandby.end({ timeout: 5 });
        await standby.stop('fast');
      });
      await during(2_000);
      // it comes back with what it had replayed, and applies no commit for an hour
      await standby.start(['recovery_min_apply_delay=1h']);
      const restarted = postgres(standby.url, { max: 1, onnotice: () => {} });
      const [held] = await restarted<{ version: string; epoch: string; supply: string; replayed: Date | null }[]>`
        SELECT version::text, epoch, (SELECT total_supply::text FROM ticks WHERE tick = 'alpha') AS supply,
               pg_last_xact_replay_timestamp() AS replayed FROM data_version`;
      await restarted.end({ timeout: 5 });
      seen.replayed = held!.replayed;
      seen.behindBy = performance.now() - acks.get(Number(held!.supply) + 1)!;
      // a gateway started now: the standby is far behind and has replayed nothing since it started
      const late = await startGateway({ REDIS_URL: redis.url });
      ask('late', late.base);
      await during(3_000);
      // nothing stored under the standby's old version (the late gateway's own Redis)
      const keys = new Redis(redis.url);
      seen.staleKeys = await keys.keys(`*:${held!.epoch}.${held!.version}:*`);
      seen.allKeys = await keys.keys('*');
      keys.disconnect();

      phase = 'standby caught up';
      await standby.stop('fast');
      await standby.start();
      await waitFor(async () => gateways.open.every((g) => g.gateway.sources.replicas[0]!.inRotation), 15_000, 20);
      await during(1_500);
    };
    try {
      await phases();
    } finally {
      asking = false;
      writing = false;
      await Promise.allSettled([...clients, writes]);
    }
    await Promise.all(clients);

    // an answer holding write n is too old when write n+1 was acknowledged more than the budget before it was asked for
    const ageOf = (a: Answer) => {
      const newer = acks.get(a.value + 1);
      return newer === undefined || newer > a.sent ? 0 : a.sent - newer;
    };
    const tooOld = answers.filter((a) => ageOf(a) > budgetMs);
    const byPhase = new Map<string, Answer[]>();
    for (const a of answers) byPhase.set(`${a.gateway}, ${a.phase}`, [...(byPhase.get(`${a.gateway}, ${a.phase}`) ?? []), a]);
    for (const [name, list] of byPhase) {
      const ages = list.map(ageOf);
      figures.push(`${name}: ${list.length} answers (${list.filter((a) => a.cache === 'hit').length} hits), ` +
        `${ages.filter((x) => x > 0).length} behind the primary, oldest ${Math.max(...ages).toFixed(0)} ms (budget ${budgetMs} ms)`);
    }
    figures.push(`standby restarted ${(seen.behindBy / 1000).toFixed(1)} s behind (last replayed commit: ${seen.replayed?.toISOString() ?? 'none'}); ` +
      `keys of its version in the late gateway's Redis: ${seen.staleKeys.length} of ${seen.allKeys.length}`);
    expect(seen.inRotationWhileStreaming).toBe(true);
    expect(seen.behindBy).toBeGreaterThan(budgetMs);
    expect(seen.replayed).toBeNull();
    expect(byPhase.get('late, standby restarted behind')?.length).toBeGreaterThan(0);
    expect(tooOld.map((a) => `${a.gateway}, ${a.phase}: ${a.value} ${ageOf(a).toFixed(0)} ms old (${a.cache})`)).toEqual([]);
    expect(seen.staleKeys).toEqual([]);
    expect(seen.allKeys.length).toBeGreaterThan(0);
  }, 90_000);
});

import { createClient } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { startSyncProcess, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// Live updates fed by the sync (npm run sync, polling follow) rather than by a writer of the read model:
// the indexer flushes a block to its MariaDB, the sync applies it, and a subscriber of the gateway gets the
// tick's mint and the chain's new block. The backfill before (triggers off) sends nothing.

const server = await findServer();
const tick = { chain: 'bsc', protocol: 'bsc-20', tick: 'live' };
const minter = '0x00000000000000000000000000000000000Ab0b1';

describe('live updates from the sync', { timeout: 180_000, ...skipUnless(server, because.noServerForChild) }, () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  let w: IndexerWriter;
  let sync: SyncProcess | null = null;
  let live: TestGateway;

  beforeAll(async () => {
    w = new IndexerWriter(src.conn, 3 * 60);
    w.deploy({ ...tick, hash: '0xd0d0000000000000000000000000000000000000000000000000000000000abc' });
    for (let i = 0; i < 5; i++) w.mint(tick, minter, '10');
    await w.flush('bsc');
    live = await startTestGateway(db, { CACHE: true });
    sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--mode', 'polling', '--poll-interval-ms', '200',
      '--source-time-zone', 'Europe/Moscow', '--log-level', 'info']);
    await waitFor(async () => {
      const [b] = await db.sql`SELECT backfill_done FROM sync_source`.catch(() => [] as any[]);
      return b?.backfill_done && Number((await db.sql`SELECT count(*)::int AS n FROM address_txs`)[0]!.n) === 6;
    }, 60_000, 'the sync to catch up');
  }, 120_000);
  afterAll(async () => {
    await sync?.kill();
    await live?.close();
  });

  it('a block the indexer flushes reaches the subscribers of its tick and chain', async () => {
    const client = createClient({ url: `${live.base}/graphql`, retryAttempts: 0 });
    const events: any[] = [];
    const stops = [
      client.subscribe({ query: 'subscription { tickActivity(chain: "bsc", protocol: "bsc-20", tick: "live") { movement { address amount event } tick { stats { minted } } } }' },
        { next: (v) => void events.push(v), error: () => {}, complete: () => {} }),
      client.subscribe({ query: 'subscription { blocks(chains: ["bsc"]) { chainName inscriptionCount } }' },
        { next: (v) => void events.push(v), error: () => {}, complete: () => {} }),
    ];
    try {
      await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 2, 10_000, 'the subscriptions');
      expect(events).toEqual([]); // the backfill sent nothing, and nothing happened since
      w.mint(tick, minter, '7');
      await w.flush('bsc');
      await waitFor(async () => events.length >= 2, 30_000, 'the live events');
      expect(events).toContainEqual({ data: { tickActivity: { movement: { address: minter, amount: '7', event: 'MINT' }, tick: { stats: { minted: '57' } } } } });
      expect(events).toContainEqual({ data: { blocks: { chainName: 'bsc', inscriptionCount: 1 } } });
    } finally {
      stops.forEach((stop) => stop());
      client.dispose();
    }
  });
});

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Sql } from '../../src/db/client.js';
import { startEmbedded, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { prepareDatabase } from '../../src/db/prepare.js';
import { createDemoPlayer, type DemoPlayer } from '../../src/db/seed/player.js';
import { createLogger } from '../../src/observability/logger.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';

// Live updates on the quick start: `npm start` with no DATABASE_URL (the embedded engine and its demo
// data) delivers subscription events, and the demo player (DEMO_PLAYER, on by default there) makes the
// README's `curl -N` example answer within seconds. The player writes through the sync's write path, so
// every counter and total stays what a full recount gives, and its data is bounded (played mints are
// taken back past DEMO_PLAYER_MAX_MINTS, and its tables do not grow over cycles).

const root = fileURLToPath(new URL('../..', import.meta.url));
const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;

/** The first `next` event of a subscription over SSE (the README's curl example), or null after `ms`. */
async function firstEvent(base: string, query: string, ms: number): Promise<{ data: any; afterMs: number } | null> {
  const started = Date.now();
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), ms);
  try {
    const res = await fetch(`${base}/graphql`, {
      method: 'POST', signal: abort.signal,
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query }),
    });
    expect(res.status).toBe(200);
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString();
      const m = /event: next\ndata: (.*)\n/.exec(text);
      if (m) return { data: JSON.parse(m[1]!), afterMs: Date.now() - started };
    }
    return null;
  } catch (error) {
    if ((error as Error).name === 'AbortError') return null;
    throw error;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

describe('npm start on a fresh embedded directory: subscription events arrive', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'igw-live-demo-'));
  let gateway: GatewayProcess | undefined;

  afterAll(async () => {
    await gateway?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('the README\'s blocks subscription gets an event within seconds; tick activity too', async () => {
    // npm start's command (compiled build, heap limit), every demo setting at its default
    gateway = await startGatewayProcess({ EMBEDDED_DATA_DIR: dataDir, DB_POOL_MAX: '4' }, 180_000, { command: scripts.start });
    expect(gateway.output()).toMatch(/demo player: playing new blocks and mints/);
    const blocks = await firstEvent(gateway.base,
      'subscription { blocks(chains: ["eth"]) { chainName height time inscriptionCount } }', 20_000);
    expect(blocks, 'no blocks event in 20 s').not.toBeNull();
    expect(blocks!.data.data.blocks).toMatchObject({ chainName: 'eth', height: expect.stringMatching(/^\d+$/) });
    // the demo's eth height moved past the seeded one (19319706), with a block time of now
    expect(BigInt(blocks!.data.data.blocks.height)).toBeGreaterThan(19_319_706n);
    expect(Math.abs(Date.parse(blocks!.data.data.blocks.time) - Date.now())).toBeLessThan(60_000);
    // a mint of the played tick arrives as tick activity (every chain mints in turn: within 7 steps)
    const tick = playedTick(gateway.output(), 'eth');
    const activity = await firstEvent(gateway.base,
      `subscription { tickActivity(chain: "${tick.chain}", protocol: "${tick.protocol}", tick: "${tick.tick}") { movement { event amount } tick { stats { minted } } } }`,
      40_000);
    expect(activity, 'no tickActivity event in 40 s').not.toBeNull();
    expect(activity!.data.data.tickActivity.movement.event).toBe('MINT');
  }, 300_000);
});

/** The tick the player mints on a chain, from its start line ("chain/protocol/tick"). */
function playedTick(output: string, chain: string): { chain: string; protocol: string; tick: string } {
  const line = output.split('\n').map((l) => { try { return JSON.parse(l); } catch { return {}; } })
    .find((l) => l.msg === 'demo player: playing new blocks and mints');
  const key = (line.ticks as string[]).find((t) => t.startsWith(`${chain}/`))!;
  const [, protocol, tick] = key.split('/');
  return { chain, protocol: protocol!, tick: tick! };
}

describe('the demo player: exact counters, bounded data', () => {
  let embedded: EmbeddedDatabase;
  let writer: Sql;
  let player: DemoPlayer;

  beforeAll(async () => {
    embedded = await startEmbedded({ maxConnections: 8 });
    await prepareDatabase({ socketPath: embedded.socketPath }, { DB_CONNECT_TIMEOUT_S: 10 }, 'always');
    writer = embedded.writer();
    player = createDemoPlayer({ sql: writer, intervalMs: 60_000, maxMints: 50, logger: createLogger({ level: 'silent' }) });
    await player.prepare();
  }, 240_000);
  afterAll(async () => {
    await player?.stop();
    await writer?.end({ timeout: 5 });
    await embedded?.stop();
  });

  /** Every counter table as it is, and as a full recount makes it (refresh_counters, rolled back). */
  async function countersAndRecount() {
    const read = async (sql: Sql) => ({
      ticks: await sql`SELECT id, minted::text, holders, tx_cnt, progress::text FROM ticks ORDER BY id`,
      lists: await sql`SELECT list, chain, protocol, tick, n FROM list_totals WHERE n <> 0 ORDER BY 1, 2, 3, 4`,
      addresses: await sql`SELECT address_key, movements, balances FROM address_totals WHERE movements <> 0 OR balances <> 0 ORDER BY 1`,
      txs: await sql`SELECT address_key, n FROM address_tx_totals WHERE n <> 0 ORDER BY 1`,
      history: await sql`SELECT id, valid_to FROM balance_history ORDER BY id`,
    });
    const now = await read(writer);
    let recount: Awaited<ReturnType<typeof read>> | undefined;
    await writer.begin(async (tx) => {
      await tx`SELECT refresh_counters()`;
      recount = await read(tx as unknown as Sql);
      throw new Error('rollback');
    }).catch((error: Error) => { if (error.message !== 'rollback') throw error; });
    return { now, recount: recount! };
  }

  /** Each played (tick, address): its balance is the last history row's, and mints sum to the tick's minted. */
  async function ledgerMismatches() {
    return writer`
      SELECT t.id, t.minted::text, (SELECT coalesce(sum(b.balance), 0) FROM balances b WHERE b.tick_id = t.id)::text AS balances
        FROM ticks t
       WHERE t.minted <> (SELECT coalesce(sum(m.amount), 0) FROM address_txs m WHERE m.tick_id = t.id AND m.event = 2)
          OR EXISTS (SELECT 1 FROM balances b
                      WHERE b.tick_id = t.id AND b.balance <> coalesce((SELECT h.balance FROM balance_history h
                        WHERE h.tick_id = b.tick_id AND h.address_key = b.address_key ORDER BY h.block_height DESC, h.id DESC LIMIT 1), b.balance))`;
  }

  const playedTableBytes = async () => Number((await writer<{ n: string }[]>`
    SELECT sum(pg_total_relation_size(c))::text AS n
      FROM unnest(ARRAY['transactions', 'address_txs', 'balance_history', 'balances', 'ticks', 'indexed_blocks', 'list_totals']::regclass[]) c`)[0]!.n);

  it('the seeded demo: counters equal a full recount (the baseline)', async () => {
    const { now, recount } = await countersAndRecount();
    expect(now).toEqual(recount);
  });

  it('after 120 steps (two rewinds of 50 played mints): counters equal a full recount, ledgers agree', async () => {
    const before = await writer`SELECT chain, block_number::text FROM indexed_blocks ORDER BY chain`;
    for (let i = 0; i < 120; i++) await player.step();
    const after = await writer`SELECT chain, block_number::text FROM indexed_blocks ORDER BY chain`;
    // every chain moved one block per step
    expect(after.map((r) => BigInt(r.block_number) - BigInt(before.find((b) => b.chain === r.chain)!.block_number)))
      .toEqual(after.map(() => 120n));
    const { now, recount } = await countersAndRecount();
    expect(now).toEqual(recount);
    expect(await ledgerMismatches()).toEqual([]);
    // never more played mints than the bound
    expect(player.played()).toBeLessThanOrEqual(50);
    const [played] = await writer`SELECT count(*)::int AS n FROM transactions WHERE op = 'mint' AND block_time > now() - interval '1 day'`;
    expect(played!.n).toBe(player.played());
  }, 240_000);

  it('bounded: after a few rewinds, eight more cycles leave the tables about where they were', async () => {
    // warm-up: the first rewinds leave their freed pages for the next cycles to reuse
    for (let i = 0; i < 200; i++) await player.step();
    const warm = await playedTableBytes();
    for (let i = 0; i < 400; i++) await player.step();
    // 400 mints without the rewind grow these tables by ~1.6 MB (~4 KB a mint, measured); with it, the
    // growth is index pages settling (measured +0.1 MB over 12 cycles after the first 12)
    expect(await playedTableBytes() - warm).toBeLessThan(400_000);
    expect(player.played()).toBeLessThanOrEqual(50);
  }, 600_000);

  it('DEMO_PLAYER: on by default for the embedded demo, refused with a DATABASE_URL', () => {
    expect(loadConfig({}).DEMO_PLAYER).toBe('auto');
    expect(loadConfig({}).DEMO_PLAYER_INTERVAL_MS).toBe(3_000);
    expect(() => loadConfig({ DEMO_PLAYER: 'true', DATABASE_URL: 'postgres://u@h/db' })).toThrow(/DEMO_PLAYER/);
  });
});

import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Sql } from '../client.js';
import {
  deleteHistory, deleteMovements, deleteTransactions, upsertBalances, upsertBlocks, upsertHistory, upsertMovements,
  upsertTransactions, type Tx,
} from '../writes.js';
import type { BlockWrite } from '../write-rows.js';
import { BLOCKS } from './demo.js';

// The demo player: a slow stream of new blocks and mints on top of the demo dataset, so that the quick
// start's subscriptions (and any query) see the data move. Every step is one transaction written the way
// the sync writes an indexer's changes (src/db/writes.ts: the same statements, row triggers and
// counters, data-version bump and live-event NOTIFY): a new block on every chain, and on one chain (in
// turn) a mint of its playable tick by one of that tick's holders, with its transaction, movement,
// balance and balance-history rows. Counters and totals stay exact because they are the triggers' and
// the sync's own.
//
// Bounded: the played mints are the rows above the demo's last indexed block of their chain. Once there
// are `maxMints` of them, one transaction takes them all back (balances restored, rows deleted: a rewind,
// as the sync does for a reorg) and play goes on from the current heights; played rows never exceed
// `maxMints` per table. A VACUUM of the tables it rewrites keeps their files from growing with dead rows
// (the embedded engine has no autovacuum).

export interface DemoPlayerOptions {
  /** A writable client of the demo database. */
  sql: Sql;
  /** Between two steps. */
  intervalMs: number;
  /** Played mints kept before they are taken back. */
  maxMints: number;
  logger: Logger;
}

interface Playable {
  chain: string;
  protocol: string;
  tick: string;
  tickId: string;
  /** Addresses that mint it, in turn. */
  minters: string[];
}

/** The demo's last indexed height per chain: rows above it are played ones. */
const seedHeights = new Map(BLOCKS.map((b) => [b.chain, b.block_number]));
const vacuumEverySteps = 500;
const rewrittenTables = 'indexed_blocks, ticks, balances, list_totals, address_totals, address_tx_totals, data_version';
const playedTables = 'transactions, address_txs, balance_history';

export function createDemoPlayer(options: DemoPlayerOptions) {
  const { sql, logger } = options;
  let step = 0;
  let played = 0;
  let playable: Playable[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;

  async function prepare(): Promise<void> {
    playable = await findPlayable(sql);
    played = await countPlayed(sql);
  }

  async function playStep(): Promise<void> {
    if (played >= options.maxMints) {
      await sql.begin((tx) => rewind(tx));
      logger.info({ mints: played }, 'demo player: played mints taken back (bounded demo data)');
      played = 0;
      await vacuum(sql, `${rewrittenTables}, ${playedTables}`);
    }
    const target = playable.length ? playable[step % playable.length]! : null;
    const minted = await sql.begin(async (tx) => {
      const blocks = await nextBlocks(tx);
      const block = blocks.find((b) => b.chain === target?.chain);
      const mint = target && block ? await playMint(tx, target, step, block) : false;
      await upsertBlocks(tx, blocks);
      return mint;
    });
    if (minted) played++;
    step++;
    if (step % vacuumEverySteps === 0) await vacuum(sql, rewrittenTables);
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = playStep()
        .catch((error: unknown) => logger.warn({ err: (error as Error).message }, 'demo player: step failed (retried)'))
        .finally(() => { running = null; schedule(); });
    }, options.intervalMs);
  }

  return {
    async start(): Promise<void> {
      await prepare();
      logger.info({ everyMs: options.intervalMs, ticks: playable.map((p) => `${p.chain}/${p.protocol}/${p.tick}`), maxMints: options.maxMints },
        'demo player: playing new blocks and mints');
      schedule();
    },
    /** One step now (tests). */
    step: () => playStep(),
    prepare,
    /** Played mints in the database now. */
    played: () => played,
    async stop(): Promise<void> {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

export type DemoPlayer = ReturnType<typeof createDemoPlayer>;

/** Per chain, the partly minted tick with the most supply left, and up to 20 of its holders as minters. */
async function findPlayable(sql: Sql): Promise<Playable[]> {
  const rows = await sql<{ chain: string; protocol: string; tick: string; id: string; minters: string[] }[]>`
    SELECT DISTINCT ON (t.chain) t.chain, t.protocol, t.tick, t.id::text AS id,
           ARRAY(SELECT b.address FROM balances b WHERE b.tick_id = t.id AND b.balance > 0
                  ORDER BY b.balance DESC, b.address_key LIMIT 20) AS minters
      FROM ticks t
     WHERE t.limit_per_mint > 0 AND t.total_supply - t.minted >= t.limit_per_mint * 100000
       AND EXISTS (SELECT 1 FROM balances b WHERE b.tick_id = t.id AND b.balance > 0)
     ORDER BY t.chain, t.total_supply - t.minted DESC, t.id`;
  const order = BLOCKS.map((b) => b.chain);
  return rows.map((r) => ({ chain: r.chain, protocol: r.protocol, tick: r.tick, tickId: r.id, minters: r.minters }))
    .sort((a, b) => order.indexOf(a.chain) - order.indexOf(b.chain));
}

/** The played rows: mints above the demo's last indexed height of their chain. */
function playedTransactions(tx: Tx | Sql) {
  return tx`
    SELECT x.id, x.chain, x.tx_hash_key, x.block_height FROM transactions x
      JOIN unnest(${[...seedHeights.keys()]}::text[], ${[...seedHeights.values()]}::bigint[]) AS s (chain, height)
        ON x.chain = s.chain AND x.block_height > s.height
     WHERE x.op = 'mint'`;
}

async function countPlayed(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: string }[]>`SELECT count(*)::text AS n FROM (${playedTransactions(sql)}) p`;
  return Number(row?.n ?? 0);
}

/** A mint of the tick's limit (or what is left of its supply) by its next minter, in the chain's next block. */
async function playMint(tx: Tx, p: Playable, step: number, block: BlockWrite): Promise<boolean> {
  const address = p.minters[Math.floor(step / BLOCKS.length) % p.minters.length];
  if (!address) return false;
  const [m] = await tx<{ amount: string; balance: string; available: string; tx_id: string; mv_id: string; h_id: string }[]>`
    SELECT least(t.limit_per_mint, t.total_supply - t.minted)::text AS amount,
           (coalesce(b.balance, 0) + least(t.limit_per_mint, t.total_supply - t.minted))::text AS balance,
           (coalesce(b.available, 0) + least(t.limit_per_mint, t.total_supply - t.minted))::text AS available,
           nextval(pg_get_serial_sequence('transactions', 'id'))::text AS tx_id,
           nextval(pg_get_serial_sequence('address_txs', 'id'))::text AS mv_id,
           nextval(pg_get_serial_sequence('balance_history', 'id'))::text AS h_id
      FROM ticks t LEFT JOIN balances b ON b.tick_id = t.id AND b.address_key = lower(${address})
     WHERE t.id = ${p.tickId}`;
  if (!m || Number(m.amount) <= 0) return false;
  const key = { chain: p.chain, protocol: p.protocol, tick: p.tick, tick_id: p.tickId };
  const hash = (p.chain === 'btc' ? '' : '0x') + randomBytes(32).toString('hex');
  const at = block.block_time;
  await upsertTransactions(tx, [{
    id: m.tx_id, chain: p.chain, protocol: p.protocol, block_height: block.block_number, position_in_block: '0', block_time: at,
    tx_hash: hash, from_address: address, to_address: address, op: 'mint', tick: p.tick, amt: m.amount,
    gas: p.chain === 'btc' ? '180' : '21000', gas_price: p.chain === 'btc' ? '20' : '1000000000', status: 0,
    created_at: block.indexed_at, updated_at: block.indexed_at,
  }]);
  await upsertMovements(tx, [{ ...key, id: m.mv_id, address, tx_hash: hash, amount: m.amount, event: 2, operate: 'mint',
    created_at: block.indexed_at, updated_at: block.indexed_at }]);
  await upsertBalances(tx, [{ ...key, address, balance: m.balance, available: m.available, updated_at: block.indexed_at }]);
  await upsertHistory(tx, [{ ...key, id: m.h_id, address, block_height: block.block_number, amount: m.amount, balance: m.balance,
    available: m.available, event: 2, tx_hash: hash, created_at: block.indexed_at }]);
  return true;
}

/** Every chain one block further, at the wall clock's time (a second after the chain's last block if that is later). */
function nextBlocks(tx: Tx): Promise<BlockWrite[]> {
  return tx<BlockWrite[]>`
    SELECT ib.chain, (ib.block_number + 1)::text AS block_number,
           to_char(greatest(date_trunc('second', ib.block_time) + interval '1 second', date_trunc('second', now()))
                   AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS block_time,
           to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS indexed_at
      FROM indexed_blocks ib ORDER BY ib.chain`;
}

/** Takes every played mint back in one transaction: balances restored, then the rows deleted. */
async function rewind(tx: Tx): Promise<void> {
  const played = await tx<{ id: string }[]>`SELECT id::text AS id FROM (${playedTransactions(tx)}) p`;
  const movements = await tx<{ id: string }[]>`
    SELECT m.id::text AS id FROM address_txs m JOIN (${playedTransactions(tx)}) p ON lower(m.tx_hash) = p.tx_hash_key
     WHERE m.event = 2`;
  const history = await tx<{ id: string }[]>`
    SELECT h.id::text AS id FROM balance_history h JOIN (${playedTransactions(tx)}) p ON lower(h.tx_hash) = p.tx_hash_key
     WHERE h.block_height = p.block_height`;
  const balances = await tx<{ chain: string; protocol: string; tick: string; address: string; balance: string; available: string }[]>`
    SELECT t.chain, t.protocol, t.tick, b.address, (b.balance - s.amount)::text AS balance,
           greatest(b.available - s.amount, 0)::text AS available
      FROM (SELECT m.tick_id, m.address_key, sum(m.amount) AS amount
              FROM address_txs m WHERE m.id = ANY(${movements.map((r) => r.id)}::bigint[]) GROUP BY 1, 2) s
      JOIN balances b ON b.tick_id = s.tick_id AND b.address_key = s.address_key
      JOIN ticks t ON t.id = s.tick_id`;
  const now = new Date().toISOString();
  await upsertBalances(tx, balances.map((b) => ({ ...b, updated_at: now })));
  await deleteHistory(tx, history.map((r) => r.id));
  await deleteMovements(tx, movements.map((r) => r.id));
  await deleteTransactions(tx, played.map((r) => r.id));
}

async function vacuum(sql: Sql, tables: string): Promise<void> {
  await sql.unsafe(`VACUUM ${tables}`);
}

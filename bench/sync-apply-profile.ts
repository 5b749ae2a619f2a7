// npx tsx bench/sync-apply-profile.ts --database-url URL [--rows 1250] [--rounds 10] [--explain]
//
// Where one follow transaction's time goes in PostgreSQL (the sync's apply, src/db/writes.ts): a read
// model loaded by `bench:data` gets, per round, one second of the bench:sync writer at 5,000 rows/s (N
// mints: N txs, N address_txs, N balances, N balance_history rows and the block row) written as the
// follow writes them, each statement timed, in a transaction that is rolled back (the read model is left
// as it was). Figures to stdout, nothing asserted. --explain: one more round with auto_explain (every
// statement's plan with its trigger times, nested statements too) printed.
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import * as current from '../src/db/writes.js';
import type { BalanceWrite, HistoryWrite, MovementWrite, TransactionWrite } from '../src/db/write-rows.js';

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    rows: { type: 'string', default: '1250' },
    rounds: { type: 'string', default: '10' },
    explain: { type: 'boolean', default: false },
    // another build of src/db/writes.ts (an older commit's, to compare)
    module: { type: 'string' },
  },
});
const write: typeof current = values.module ? await import(values.module) : current;
const n = Number(values.rows);
const rounds = Number(values.rounds);
const explain = values.explain;
const sql = postgres(values['database-url']!, { max: 1, onnotice: (n) => { if (explaining) console.log(n.message); } }) as unknown as postgres.Sql<Record<string, never>>;
let explaining = false;
const [tk] = await sql<{ chain: string; protocol: string; tick: string }[]>`SELECT chain, protocol, tick FROM ticks WHERE chain = 'eth' ORDER BY id LIMIT 1`;
const [top] = await sql<{ t: string; m: string; h: string; b: string }[]>`SELECT (SELECT max(id) FROM transactions)::text AS t,
  (SELECT max(id) FROM address_txs)::text AS m, (SELECT max(id) FROM balance_history)::text AS h,
  (SELECT block_number FROM indexed_blocks WHERE chain = 'eth')::text AS b`;
class Rollback extends Error {}
const times: Record<string, number[]> = {};
const rec = (k: string, ms: number) => { (times[k] ??= []).push(ms); };
for (let round = 0; round < rounds + (explain ? 1 : 0); round++) {
  explaining = explain && round === rounds;
  const h = String(Number(top!.b) + 1 + round);
  const at = new Date(Date.UTC(2024, 1, 12) + round * 1000).toISOString();
  const txs: TransactionWrite[] = []; const moves: MovementWrite[] = []; const bals: BalanceWrite[] = [];
  const hist: HistoryWrite[] = [];
  for (let i = 0; i < n; i++) {
    const a = `0x${(round * n + i + 1).toString(16).padStart(40, 'f')}`;
    const hash = `0x${h.padStart(8, '0')}${i.toString(16).padStart(8, '0')}${'0'.repeat(48)}`;
    txs.push({ id: String(BigInt(top!.t) + BigInt(round * n + i + 1)), chain: tk!.chain, protocol: tk!.protocol, block_height: h,
      position_in_block: String(i), block_time: at, tx_hash: hash, from_address: a, to_address: a, op: 'mint', tick: tk!.tick,
      amt: '1', gas: '21000', gas_price: '1', status: 1, created_at: at, updated_at: at });
    moves.push({ id: String(BigInt(top!.m) + BigInt(round * n + i + 1)), ...tk!, address: a, tx_hash: hash, amount: '1', event: 2,
      operate: 'mint', created_at: at, updated_at: at });
    bals.push({ ...tk!, address: a, balance: '1', available: '0', updated_at: at });
    hist.push({ id: String(BigInt(top!.h) + BigInt(round * n + i + 1)), ...tk!, address: a, block_height: null, amount: '1',
      balance: '1', available: '0', event: 2, tx_hash: hash, created_at: at });
  }
  const t0 = performance.now();
  await sql.begin(async (tx) => {
    if (explaining) {
      await tx`LOAD 'auto_explain'`;
      await tx`SELECT set_config('auto_explain.log_min_duration', '0', true), set_config('auto_explain.log_analyze', 'on', true),
        set_config('auto_explain.log_triggers', 'on', true), set_config('auto_explain.log_nested_statements', 'on', true),
        set_config('client_min_messages', 'log', true)`;
    }
    const time = async (k: string, f: () => Promise<unknown>) => { const s = performance.now(); await f(); if (!explaining) rec(k, performance.now() - s); };
    const t = tx as current.Tx;
    await time('block', () => write.upsertBlocks(t, [{ chain: 'eth', block_number: h, block_time: at, indexed_at: at }]));
    await time('txs', () => write.upsertTransactions(t, txs));
    await time('address_txs', () => write.upsertMovements(t, moves));
    await time('balances', () => write.upsertBalances(t, bals));
    await time('balance_txn', async () => write.upsertHistory(t, (await write.withBlockHeights(t, hist)).rows));
    if (!explaining) rec('total (before commit)', performance.now() - t0);
    throw new Rollback();
  }).catch((e) => { if (!(e instanceof Rollback)) throw e; });
}
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [k, xs] of Object.entries(times)) console.log(`${k.padEnd(24)} median ${med(xs).toFixed(1)} ms  (${xs.map((x) => x.toFixed(0)).join(' ')})`);
await sql.end();

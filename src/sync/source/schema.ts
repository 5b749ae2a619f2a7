// What the sync reads from the indexer's schema, and which indexer version introduced each part, so a
// preflight against an older database names what is missing and what to upgrade.
import type { SourceConnection } from './connection.js';

const base = 'init_mysql.sql';
/** table → column → the indexer DDL file that added it. */
const expectedSchema: Record<string, Record<string, string>> = {
  chain_info: Object.fromEntries(
    ['id', 'chain_id', 'chain', 'outer_chain', 'name', 'logo', 'network_id', 'ext', 'created_at', 'updated_at']
      .map((c) => [c, '20240221-create-chain-info-add-index.sql'])),
  block: { chain: base, block_hash: base, block_number: base, block_time: base, updated_at: base, chain_id: '20240216-create-index-add-chainid.sql' },
  inscriptions: Object.fromEntries(['id', 'sid', 'chain', 'protocol', 'tick', 'name', 'limit_per_mint', 'deploy_by', 'total_supply',
    'decimals', 'deploy_hash', 'deploy_time', 'transfer_type', 'created_at', 'updated_at'].map((c) => [c, base])),
  inscriptions_stats: Object.fromEntries(['id', 'sid', 'chain', 'protocol', 'tick', 'minted', 'mint_completed_time',
    'mint_first_block', 'mint_last_block', 'last_sn', 'holders', 'tx_cnt', 'created_at', 'updated_at'].map((c) => [c, base])),
  txs: Object.fromEntries(['id', 'chain', 'protocol', 'block_height', 'position_in_block', 'block_time', 'tx_hash', 'from', 'to',
    'op', 'tick', 'amt', 'gas', 'gas_price', 'status', 'created_at', 'updated_at'].map((c) => [c, base])),
  balances: Object.fromEntries(['id', 'sid', 'chain', 'protocol', 'address', 'tick', 'available', 'balance', 'created_at',
    'updated_at'].map((c) => [c, base])),
  address_txs: {
    ...Object.fromEntries(['id', 'chain', 'event', 'protocol', 'operate', 'tx_hash', 'address', 'amount', 'tick', 'created_at',
      'updated_at'].map((c) => [c, base])),
    related_address: '20240221_alter_tx_hash_chainid.sql',
  },
  utxos: Object.fromEntries(['id', 'sn', 'chain', 'protocol', 'address', 'tick', 'amount', 'root_hash', 'tx_hash', 'status',
    'created_at', 'updated_at'].map((c) => [c, base])),
  balance_txn: Object.fromEntries(['id', 'chain', 'protocol', 'event', 'address', 'tick', 'amount', 'available', 'balance',
    'tx_hash', 'created_at', 'updated_at'].map((c) => [c, base])),
};

/**
 * How every read of a source table's rows begins (add `WHERE`/`ORDER BY` on its own columns). A
 * balance_txn row carries no block height: it gets its transaction's (the txs row of the same chain and
 * hash — the indexer writes both in one flush; the lowest height if a hash was written twice), through
 * the txs index on (tx_hash, chain). NULL when there is none (the row is then a bad row).
 */
export function selectRows(table: string, withHeights = true): string {
  // (the backfill attaches the heights in PostgreSQL instead, from the transactions it copied: withHeights false)
  if (table === 'balance_txn' && withHeights) {
    return 'SELECT b.*, (SELECT min(x.block_height) FROM `txs` x WHERE x.tx_hash = b.tx_hash AND x.chain = b.chain) AS block_height ' +
      'FROM `balance_txn` b';
  }
  return `SELECT * FROM \`${table}\``;
}

export interface SchemaProblem { table: string; column?: string; addedBy: string }

/** Rows in a source table: the server's estimate (MySQL), or counted (SQLite has none). */
export async function estimateRows(conn: SourceConnection, table: string): Promise<number> {
  const [rows] = conn.dialect === 'sqlite'
    ? await conn.query(`SELECT count(*) AS n FROM \`${table}\``)
    : await conn.query('SELECT TABLE_ROWS AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?', [table]);
  return Number((rows as { n: string }[])[0]?.n ?? 0);
}

/** Missing tables and columns of the source database, each with the indexer DDL file that adds it. */
export async function checkSourceSchema(conn: SourceConnection, database: string): Promise<SchemaProblem[]> {
  const [rows] = conn.dialect === 'sqlite'
    ? await conn.query(`SELECT m.name AS t, p.name AS c FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'`)
    : await conn.query('SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ?', [database]);
  const present = new Map<string, Set<string>>();
  for (const r of rows as { t: string; c: string }[]) {
    const t = r.t.toLowerCase();
    if (!present.has(t)) present.set(t, new Set());
    present.get(t)!.add(r.c.toLowerCase());
  }
  const problems: SchemaProblem[] = [];
  for (const [table, columns] of Object.entries(expectedSchema)) {
    const have = present.get(table);
    if (!have) {
      problems.push({ table, addedBy: Object.values(columns)[0]! });
      continue;
    }
    for (const [column, addedBy] of Object.entries(columns)) if (!have.has(column)) problems.push({ table, column, addedBy });
  }
  return problems;
}

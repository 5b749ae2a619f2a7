// --verify's counting reads of the source: rows per chain, heights, and per tick the holders, movements,
// transactions, minted sums and the indexer's own counters.
import type { SourceRow } from '../mapping.js';
import type { SourceConnection } from './connection.js';

const all = async (conn: SourceConnection, sql: string) => (await conn.query(sql))[0] as SourceRow[];

/** Rows per chain of a source table (chain as stored, count in `n`). */
export const rowsPerSourceChain = (conn: SourceConnection, table: string) =>
  all(conn, `SELECT chain, count(*) AS n FROM \`${table}\` GROUP BY chain`);
export const sourceHeights = (conn: SourceConnection) => all(conn, 'SELECT chain, block_number FROM block');
export const sourceTickKeys = (conn: SourceConnection) => all(conn, 'SELECT chain, protocol, tick FROM inscriptions');
/** Per tick: balances above 0 (`n`). */
export const sourceHolders = (conn: SourceConnection) => all(conn, `SELECT chain, protocol, tick, count(*) AS n FROM balances
  WHERE ${conn.dialect === 'sqlite' ? 'CAST(balance AS REAL) > 0' : 'balance > 0'} GROUP BY chain, protocol, tick`);
export const sourceMovementCounts = (conn: SourceConnection) =>
  all(conn, 'SELECT chain, protocol, tick, count(*) AS n FROM address_txs GROUP BY chain, protocol, tick');
export const sourceTxCounts = (conn: SourceConnection) => all(conn, 'SELECT chain, protocol, tick, count(*) AS n FROM txs GROUP BY chain, protocol, tick');
/** The mint movements' amounts: per tick summed exactly by MySQL (`s`), one row per movement from SQLite
 *  (`amount`; it sums in floating point). */
export const sourceMints = (conn: SourceConnection) => (conn.dialect === 'sqlite'
  ? all(conn, 'SELECT chain, protocol, tick, amount FROM address_txs WHERE event = 2')
  : all(conn, 'SELECT chain, protocol, tick, CAST(sum(amount) AS CHAR) AS s FROM address_txs WHERE event = 2 GROUP BY chain, protocol, tick'));
export const sourceStats = (conn: SourceConnection) =>
  all(conn, 'SELECT chain, protocol, tick, CAST(minted AS CHAR) AS minted, holders, tx_cnt FROM inscriptions_stats');

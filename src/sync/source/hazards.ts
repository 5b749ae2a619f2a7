// The preflight's samples of the source for values the read model refuses, and the server ids in use.
import type { SourceConnection } from './connection.js';

/** Inscriptions whose (chain, protocol, tick) differ only in case, grouped (at most 10 groups). */
export async function caseOnlyTicks(conn: SourceConnection) {
  const [rows] = await conn.query(`SELECT lower(chain) AS chain, lower(protocol) AS protocol, lower(tick) AS tick, count(*) AS n,
      min(id) AS first_id FROM inscriptions GROUP BY lower(chain), lower(protocol), lower(tick) HAVING count(*) > 1 ORDER BY 5 LIMIT 10`);
  return rows as { chain: string; protocol: string; tick: string; n: number | string; first_id: number | string }[];
}

/** Of the newest `sample` txs rows, those with a height or position above PostgreSQL's bigint (at most 10). */
export async function outOfRangeTxs(conn: SourceConnection, sample: number) {
  const [rows] = await conn.query(`SELECT id, block_height, position_in_block FROM (SELECT id, block_height, position_in_block FROM txs
      ORDER BY id DESC LIMIT ${sample}) s WHERE block_height > 9223372036854775807 OR position_in_block > 9223372036854775807 LIMIT 10`);
  return rows as { id: unknown; block_height: unknown; position_in_block: unknown }[];
}

/** The source server's own server_id, and the replicas it lists (those that register). */
export async function serverIdsInUse(conn: SourceConnection): Promise<{ own: number; replicas: Record<string, unknown>[] }> {
  const [own] = await conn.query('SELECT @@server_id AS id');
  const [hosts] = await conn.query('SHOW SLAVE HOSTS').catch(() => [[]] as unknown[]);
  return { own: Number((own as { id: unknown }[])[0]?.id), replicas: hosts as Record<string, unknown>[] };
}

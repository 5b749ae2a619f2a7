import type { Sql } from '../client.js';
import { loadDataset } from '../load.js';
import { buildDemoDataset } from './demo.js';

export async function isEmpty(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ empty: boolean }[]>`SELECT NOT EXISTS (SELECT 1 FROM ticks) AS empty`;
  return row?.empty ?? true;
}

/** Loads the deterministic demo dataset into an empty, migrated database. */
export async function seedDemo(sql: Sql): Promise<void> {
  if (!(await isEmpty(sql))) throw new Error('the database already holds ticks: seed only an empty read model');
  await loadDataset(sql, buildDemoDataset());
}

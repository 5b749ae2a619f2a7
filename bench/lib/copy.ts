// COPY … FROM STDIN through postgres.js, the way the stack notes require: on a reserved connection of a
// dedicated one-connection client that is ended afterwards (a COPY stream can wedge a pooled connection).
// Row triggers (counters) and FK checks are off on that connection (session_replication_role = replica);
// refresh_counters() recomputes the counters once at the end.
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { progressBar } from './progress.js';
import { LineSource } from '../../src/sync/target/copy.js';

export interface CopyResult { table: string; rows: number; seconds: number }

export interface CopyOptions {
  /** TRUNCATE + COPY (FREEZE) in one transaction: rows are written frozen and all-visible, so the
   *  VACUUM afterwards has no heap pages to visit. Only for tables no foreign key points to. */
  freeze?: boolean;
  label?: string;
}

export async function copyInto(url: string, table: string, columns: string[], lines: Iterable<string>,
  expectedRows: number, options: CopyOptions = {}): Promise<CopyResult> {
  const client = postgres(url, {
    max: 1, onnotice: () => {}, idle_timeout: 0,
    connection: { application_name: 'igw-bench-loader', statement_timeout: 0 },
  });
  const started = performance.now();
  const bar = progressBar(options.label ?? table, expectedRows);
  let rows = 0;
  try {
    const r = await client.reserve();
    try {
      await r`SET session_replication_role = replica`;
      await r`SET synchronous_commit = off`;
      if (options.freeze) {
        await r`BEGIN`;
        await r.unsafe(`TRUNCATE ${table}`);
      }
      const writable = await r.unsafe(
        `COPY ${table} (${columns.join(', ')}) FROM STDIN${options.freeze ? ' WITH (FREEZE)' : ''}`).writable();
      await pipeline(new LineSource(lines, (n) => { rows += n; bar.add(n); }), writable);
      if (options.freeze) await r`COMMIT`;
    } finally {
      r.release();
    }
  } finally {
    bar.stop();
    await client.end({ timeout: 5 });
  }
  if (rows !== expectedRows) throw new Error(`${table}: wrote ${rows} rows, planned ${expectedRows}`);
  return { table, rows, seconds: (performance.now() - started) / 1000 };
}

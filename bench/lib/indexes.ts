// Moved to src/sync/target/indexes.ts (the sync's backfill drops and rebuilds indexes the same way); the bench's
// rebuilds show a progress bar (src/db draws none itself).
import type { Sql } from '../../src/db/client.js';
import { rebuildIndexes as rebuild, type IndexDef, type IndexTiming } from '../../src/sync/target/indexes.js';
import { progressBar } from './progress.js';

export { captureIndexes, dropIndexes, type IndexDef, type IndexTiming } from '../../src/sync/target/indexes.js';

export function rebuildIndexes(sql: Sql, defs: IndexDef[], jobs: number): Promise<IndexTiming[]> {
  return rebuild(sql, defs, jobs, (total) => progressBar('indexes', total, 'indexes'));
}

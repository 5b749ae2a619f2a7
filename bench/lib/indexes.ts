// Moved to src/db/indexes.ts (the sync's backfill drops and rebuilds indexes the same way).
export * from '../../src/db/indexes.js';

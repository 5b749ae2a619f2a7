// Moved to src/observability/progress.ts (the sync's backfill uses the same bars).
export { progressBar, type Progress } from '../../src/observability/progress.js';

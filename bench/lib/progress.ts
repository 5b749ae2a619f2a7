// Moved to src/cli/progress.ts (the sync's backfill uses the same bars).
export { progressBar, type Progress } from '../../src/cli/progress.js';

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The layer order of src/ (.dependency-cruiser.cjs): no import from a lower layer to a
// higher one, no import cycle, nothing of src/sync on the gateway's read path. `npm run lint:deps` runs
// the same check before the suite; this test names each violation in its failure.

const root = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

interface Cruise {
  summary: {
    totalCruised: number;
    violations: { rule: { name: string }; from: string; to: string; cycle?: { name: string }[] }[];
  };
}

async function cruise(): Promise<Cruise> {
  // depcruise exits non-zero on a violation; its JSON report is on stdout either way
  const result = await run(process.execPath, ['node_modules/dependency-cruiser/bin/dependency-cruise.mjs', 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'], {
    cwd: root, maxBuffer: 64 * 2 ** 20,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
  return JSON.parse(result.stdout) as Cruise;
}

describe('layers of src/', () => {
  it('no upward import, no cycle, no src/sync on the read path', async () => {
    const { summary } = await cruise();
    // not vacuous: the whole of src/ was read
    expect(summary.totalCruised).toBeGreaterThan(100);
    const violations = summary.violations.map((v) =>
      `${v.rule.name}: ${v.from} → ${v.cycle ? v.cycle.map((c) => c.name).join(' → ') : v.to}`);
    expect(violations).toEqual([]);
  }, 60_000);
});

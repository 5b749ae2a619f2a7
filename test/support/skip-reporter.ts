import type { Reporter, TestCase, TestModule, TestSuite, Vitest } from 'vitest/node';

// Prints, after the run, every skipped test or suite of the run with the reason it gives (the `skipReason`
// of test/support/skips.ts, or the note of `ctx.skip(note)`). The default reporter only counts skips.

function reasonOf(entity: TestCase | TestSuite): string | undefined {
  const meta = entity.meta() as { skipReason?: string };
  if (meta.skipReason) return meta.skipReason;
  if (entity.type !== 'test') return undefined;
  const result = entity.result();
  return result.state === 'skipped' ? result.note : undefined;
}

/** Whether a suite around the test failed (a failed beforeAll leaves its tests skipped: not a skip). */
function inFailedSuite(test: TestCase): boolean {
  for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent) {
    if (parent.state() === 'failed') return true;
  }
  return false;
}

/** The outermost skipped suite that carries a reason, or undefined. */
function skippedSuite(test: TestCase): TestSuite | undefined {
  let found: TestSuite | undefined;
  for (let parent = test.parent; parent.type === 'suite'; parent = parent.parent) {
    if (parent.state() === 'skipped' && reasonOf(parent)) found = parent;
  }
  return found;
}

export default class SkipReporter implements Reporter {
  /** With -t, the tests it leaves out are skipped too: then only skips that give a reason are listed. */
  private filtered = false;

  onInit(vitest: Vitest): void {
    this.filtered = Boolean(vitest.config.testNamePattern);
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const lines = new Map<string, number>();
    for (const module of testModules) {
      for (const test of module.children.allTests('skipped')) {
        if (inFailedSuite(test)) continue;
        const suite = skippedSuite(test);
        const entity = suite ?? test;
        const given = reasonOf(entity);
        if (!given && this.filtered) continue;
        const reason = given ?? (test.options.mode === 'todo' ? 'todo' : 'no reason given');
        const key = `${module.relativeModuleId} › ${entity.fullName}: ${reason}`;
        lines.set(key, (lines.get(key) ?? 0) + 1);
      }
    }
    if (lines.size === 0) return;
    const out = ['', ' Skipped, and why:'];
    for (const [line, count] of lines) out.push(`   ${line}${count > 1 ? ` (${count} tests)` : ''}`);
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // graphql ships CJS (main) and ESM (module) builds without an exports map: Node (and the Pothos and
    // yoga packages it loads) takes the CJS one, Vite would take the ESM one for our sources. Two copies
    // break `instanceof` checks, so tests use the same build as production.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // the default reporter only counts skips; this one also says which were skipped and why
    reporters: ['default', './test/support/skip-reporter.ts'],
  },
});

import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { generate } from '@graphql-codegen/cli';
import { afterAll, describe, expect, it } from 'vitest';
import config from '../../examples/graphql-codegen/codegen.js';

// The shipped GraphQL Code Generator config (examples/graphql-codegen/codegen.ts) run as a client would run
// it: its output type-checks (strict) with no edit, and the custom scalars come out as strings.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

// what a client writes against the generated types: every custom scalar is a string, in results and variables
const usage = `import type { HoldersAtBlockQuery, HoldersAtBlockQueryVariables, TickFiguresQuery } from './graphql';
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type Tick = NonNullable<TickFiguresQuery['tick']>;
type Holder = NonNullable<HoldersAtBlockQuery['tick']>['holders']['edges'][number]['node'];
export type Checks = [
  Expect<Equal<Tick['totalSupply'], string>>,
  Expect<Equal<Tick['stats']['minted'], string>>,
  Expect<Equal<Tick['deployTime'], string>>,
  Expect<Equal<NonNullable<Tick['chain']['latestBlock']>['number'], string>>,
  Expect<Equal<Holder['balance'], string>>,
  Expect<Equal<HoldersAtBlockQueryVariables['height'], string>>,
];
`;

/** Runs a codegen config into a fresh directory with the usage file beside it; tsc's exit code and output. */
async function generateAndCheck(codegen: typeof config) {
  const outputs = await generate({ ...codegen, cwd: root, silent: true }, false);
  expect(outputs).toHaveLength(1);
  const dir = mkdtempSync(join(tmpdir(), 'codegen-client-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'graphql.ts'), outputs[0]!.content);
  writeFileSync(join(dir, 'usage.ts'), usage);
  const args = [tsc, '--noEmit', '--strict', '--noUnusedLocals', '--target', 'es2022', '--module', 'nodenext', '--verbatimModuleSyntax',
    join(dir, 'graphql.ts'), join(dir, 'usage.ts')];
  const result = await run(process.execPath, args, { cwd: dir }).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
  );
  return { ...result, content: outputs[0]!.content };
}

describe('the GraphQL Code Generator config', () => {
  it('generates types that compile with no edit, the custom scalars as strings', async () => {
    const { code, output, content } = await generateAndCheck(config);
    expect(output).toBe('');
    expect(code).toBe(0);
    expect(content).toMatch(/export type TickFiguresQuery = /);
  }, 120_000);

  it('is not vacuous: without the scalar mapping the same usage does not compile', async () => {
    const [target, options] = Object.entries(config.generates)[0]!;
    const unmapped = { ...config, generates: { [target]: { ...(options as object), config: { enumsAsTypes: true, useTypeImports: true } } } };
    const { code, output } = await generateAndCheck(unmapped as typeof config);
    expect(code).not.toBe(0);
    expect(output).toMatch(/usage\.ts.*Type 'false' does not satisfy the constraint 'true'/);
  }, 120_000);

  it('strictScalars: a custom scalar without a mapping is an error, not unknown', async () => {
    const [target, options] = Object.entries(config.generates)[0]!;
    const partial = { ...(options as { config: { scalars: Record<string, string> } }).config };
    const { Decimal: _dropped, ...scalars } = partial.scalars;
    const missing = { ...config, generates: { [target]: { ...(options as object), config: { ...partial, scalars } } } };
    await expect(generate({ ...(missing as typeof config), cwd: root, silent: true }, false)).rejects.toThrow(/Decimal/);
  }, 120_000);
});

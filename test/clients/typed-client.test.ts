import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createClient, main } from '../../examples/typed-client/main.js';
import { DEMO_NOTABLE } from '../../src/db/seed/demo.js';
import { loadDemo, useGateway } from '../support/gateway.js';

// The typed client example (examples/typed-client: Apollo Client + gql.tada) run against a gateway on the
// demo data; its type-check is `npm run example:check`, part of `npm test`.

const root = fileURLToPath(new URL('../..', import.meta.url));
const live = useGateway({ load: loadDemo, config: { CACHE: true } });

describe('examples/typed-client', () => {
  it('lists ticks, refetches one by node(id) and lists balances, over persisted GET requests', async () => {
    const sent: { method: string; url: string }[] = [];
    const counting: typeof fetch = (input, init) => {
      sent.push({ method: init?.method ?? 'GET', url: String(input) });
      return fetch(input, init);
    };
    const endpoint = `${live.base}/graphql`;
    const lines = await main(endpoint, DEMO_NOTABLE.scriptedAddress, createClient(endpoint, counting));
    expect(lines[0]).toMatch(/^\d+ ticks; most held:$/);
    expect(lines.slice(1, 4)).toEqual([
      expect.stringMatching(/^ {2}btc brc-20 sats: \d+ holders, (MINTING|COMPLETED)$/),
      expect.stringMatching(/^ {2}\S+ \S+ \S+: \d+ holders/),
      expect.stringMatching(/^ {2}\S+ \S+ \S+: \d+ holders/),
    ]);
    expect(lines[4]).toMatch(/^node\(\S+\): sats, minted \d+(\.\d+)? of \d+/);
    expect(lines[5]).toMatch(new RegExp(`^${DEMO_NOTABLE.scriptedAddress} holds [1-9]\\d* ticks:$`));
    expect(lines.length).toBeGreaterThan(6);
    // three operations, each first sent as a hash (GET), then registered (POST)
    expect(sent.map((s) => s.method)).toEqual(['GET', 'POST', 'GET', 'POST', 'GET', 'POST']);
    // a second client: hashes only, all answered
    sent.length = 0;
    expect(await main(endpoint, DEMO_NOTABLE.scriptedAddress, createClient(endpoint, counting))).toEqual(lines);
    expect(sent.map((s) => s.method)).toEqual(['GET', 'GET', 'GET']);
    expect(sent.every((s) => !new URL(s.url).searchParams.has('query'))).toBe(true);
  });

  it('has an introspection file that matches schema/schema.graphql (npm run example:types)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'igw-tada-'));
    try {
      const output = join(dir, 'graphql-env.d.ts');
      execFileSync(join(root, 'node_modules', '.bin', 'gql-tada'),
        ['generate', 'output', '-c', join(root, 'examples', 'typed-client', 'tsconfig.json'), '--output', output], { cwd: root, stdio: 'pipe' });
      expect(readFileSync(join(root, 'schema', 'graphql-env.d.ts'), 'utf8')).toBe(readFileSync(output, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

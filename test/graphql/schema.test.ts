import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printSdl } from '../../src/graphql/schema.js';

// schema/schema.graphql is the checked-in contract for clients: it must be exactly what the code builds.

describe('schema/schema.graphql', () => {
  it('is fresh (equal to printSdl())', () => {
    const checkedIn = readFileSync(new URL('../../schema/schema.graphql', import.meta.url), 'utf8');
    expect(checkedIn, 'schema/schema.graphql is stale: run `npm run schema:print` and commit the result').toBe(printSdl());
  });
});

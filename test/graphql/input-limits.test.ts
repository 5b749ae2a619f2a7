import { describe, expect, it } from 'vitest';
import { oversizedValue } from '../../src/graphql/plugins/use-input-limits.js';
import { useGateway } from '../support/gateway.js';
import { gql } from '../support/http.js';

// The variables' bounds on /graphql queries (src/graphql/plugins/use-input-limits.ts): their JSON size in bytes
// exactly as sent back in the error, each string's and list's length with its path, whatever the nesting.

const limits = { maxVariablesBytes: 2_048, maxStringLength: 300, maxListLength: 20 };
const live = useGateway({
  config: { GRAPHQL_MAX_VARIABLES_BYTES: limits.maxVariablesBytes, GRAPHQL_MAX_STRING_LENGTH: limits.maxStringLength, GRAPHQL_MAX_LIST_LENGTH: limits.maxListLength },
});

const errorOf = (reply: { status: number; json: any }) => ({ status: reply.status, message: reply.json.errors?.[0]?.message, code: reply.json.errors?.[0]?.extensions?.code });

describe('variables on /graphql within their bounds', () => {
  it('answers variables under every bound, however they are nested', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = [deep];
    const ok = await gql(live.base, '{ __typename }', { a: 'y'.repeat(300), list: Array(20).fill(1), deep, o: { k: { n: null, b: true } } });
    expect(ok.status).toBe(200);
    expect(ok.json.data).toEqual({ __typename: 'Query' });
  });

  it('refuses variables over the byte bound with their exact JSON size, escapes counted', async () => {
    // 250 characters written as 6-byte escapes each: 1,500 bytes a string, under the length bound
    const escaped = '\u0001'.repeat(250);
    const variables = { a: escaped, b: escaped };
    const reply = await gql(live.base, '{ __typename }', variables);
    const bytes = Buffer.byteLength(JSON.stringify(variables));
    expect(bytes).toBeGreaterThan(limits.maxVariablesBytes);
    expect(errorOf(reply)).toEqual({
      status: 400, code: 'BAD_USER_INPUT', message: `Variables of ${bytes} bytes: at most 2048 (GRAPHQL_MAX_VARIABLES_BYTES)`,
    });
    // the same characters as plain text are well under it
    expect((await gql(live.base, '{ __typename }', { a: 'a'.repeat(250), b: 'b'.repeat(250) })).status).toBe(200);
  });

  it('names the first string or list over its length bound by its path', async () => {
    const long = await gql(live.base, '{ __typename }', { sel: [{ chain: 'eth' }, { chain: 'z'.repeat(301) }] });
    expect(errorOf(long)).toEqual({
      status: 400, code: 'BAD_USER_INPUT', message: 'Variable $sel[1].chain is a string of 301 characters: at most 300 (GRAPHQL_MAX_STRING_LENGTH)',
    });
    const many = await gql(live.base, '{ __typename }', { o: { names: Array(21).fill('n') } });
    expect(errorOf(many)).toEqual({
      status: 400, code: 'BAD_USER_INPUT', message: 'Variable $o.names is a list of 21 items: at most 20 (GRAPHQL_MAX_LIST_LENGTH)',
    });
    let deep: unknown = 'w'.repeat(301);
    for (let i = 0; i < 200; i++) deep = [deep];
    expect(oversizedValue({ deep }, limits)).toMatch(/^Variable \$deep(\[0\]){200} is a string of 301 characters/);
    expect(oversizedValue({ deep: [[['fine']]] }, limits)).toBeNull();
  });
});

import fc from 'fast-check';
import {
  getIntrospectionQuery, getNamedType, isAbstractType, isEnumType, isInputObjectType, isListType, isNonNullType, isObjectType, isScalarType,
  type GraphQLInputType, type GraphQLObjectType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.js';
import { testConfig } from '../support/db.js';
import { useGateway } from '../support/gateway.js';
import {
  expectNoLeak, hostileFixture, hostileString, hostileTicks, pool, send, startProber, Tally, type Exchange,
} from '../support/hostile.js';

// Generative test of the GraphQL surface: documents built from the real schema with hostile arguments
// (SQL/LIKE metacharacters, unicode look-alikes, control characters, huge, negative and fractional
// numbers, wrong enums), documents beyond the depth, alias, token and cost limits, garbage and truncated
// documents, fragment cycles, bad envelopes and variables, invalid JSON and UTF-8, batches, GET and form
// requests, wrong verbs, content types and Accept headers, and bodies over the limit. Every reply must be
// a well-formed GraphQL response whose errors carry a documented code, no 5xx, nothing internal, and an
// ordinary query sent alongside must never stall.

const REQUESTS = Number(process.env.HARDENING_REQUESTS ?? 5_000);
const CONCURRENCY = 4;
/** An ordinary request that takes this long has been starved (the default statement_timeout). */
const SLOWED_TO_A_TIMEOUT_MS = 5_000;
const documentedCodes = new Set([
  'GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'BAD_REQUEST', 'REQUEST_ENTITY_TOO_LARGE',
  'OPERATION_RESOLUTION_FAILURE',
  // automatic persisted queries: a hash the gateway does not know (docs/graphql.md "Clients and caching")
  'PERSISTED_QUERY_NOT_FOUND',
]);

// --- values -------------------------------------------------------------------------------------------
const intTokens = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 20 }).map(String) },
  { weight: 2, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.constantFrom('-1', '1001', '2147483647', '2147483648', '-2147483649', '99999999999999999999', '1.5', '1e3', '-0', 'NaN', 'null', '"10"', 'true') },
);

// Documents built from the schema by a seeded generator (fast-check picks the seed; the document is in
// the counterexample): fc.gen() per literal would cost more than the requests themselves.
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    below: (n: number) => Math.floor(next() * n),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}
type Random = ReturnType<typeof random>;
const stringPool = fc.sample(hostileString, { numRuns: 2_000, seed: 42 });
const intPool = fc.sample(intTokens, { numRuns: 500, seed: 42 });

/** A GraphQL literal for an argument of `type`, usually right-typed, sometimes not. */
function literal(r: Random, type: GraphQLInputType, depth = 0): string {
  if (isNonNullType(type)) return literal(r, type.ofType, depth);
  if (r.below(30) === 0) return r.pick(['null', '"x"', '1', '[1]', '{a: 1}', 'FOO', '$undeclared']);
  if (isListType(type)) return `[${Array.from({ length: depth > 2 ? 0 : r.below(5) }, () => literal(r, type.ofType, depth + 1)).join(', ')}]`;
  if (isEnumType(type)) return r.below(6) > 0 ? r.pick(type.getValues()).name : r.pick(['ASC', 'asc', 'DROP', '_']);
  if (isInputObjectType(type)) {
    return `{${Object.values(type.getFields()).filter(() => r.below(6) > 0).map((f) => `${f.name}: ${literal(r, f.type, depth + 1)}`).join(', ')}}`;
  }
  if (isScalarType(type) && (type.name === 'Int' || type.name === 'Float')) return r.pick(intPool);
  if (isScalarType(type) && type.name === 'Boolean') return r.pick(['true', 'false', '1']);
  const text = r.pick(stringPool);
  return r.below(10) === 0 ? `"""${text.replace(/"""|\\/g, '')}"""` : JSON.stringify(text);
}

/** A selection set on `type`, nested up to `maxDepth`; required arguments always, others sometimes. */
function selection(r: Random, type: GraphQLObjectType, depth: number, maxDepth: number): string {
  const fields = Object.values(type.getFields());
  const parts: string[] = [];
  for (let i = 1 + r.below(Math.min(4, fields.length)); i > 0; i--) {
    const field = r.pick(fields);
    const named = getNamedType(field.type);
    if (isObjectType(named) && depth >= maxDepth) {
      parts.push('__typename');
      continue;
    }
    const alias = r.below(6) === 0 ? `a${depth}_${i}: ` : '';
    const args = field.args.filter((a) => isNonNullType(a.type) || r.below(3) === 0).map((a) => `${a.name}: ${literal(r, a.type)}`);
    const head = `${alias}${field.name}${args.length ? `(${args.join(', ')})` : ''}`;
    parts.push(isObjectType(named) ? `${head} ${selection(r, named, depth + 1, maxDepth)}` : isAbstractType(named) ? `${head} { __typename }` : head);
  }
  return `{ ${parts.join(' ')} }`;
}

const queryType = schema.getQueryType()!;
const schemaDocument = fc.integer().map((seed) => {
  const r = random(seed);
  return selection(r, queryType, 1, 1 + r.below(r.below(4) === 0 ? 22 : 8));
});
const floods = fc.oneof(
  fc.integer({ min: 14, max: 3_000 }).map((n) => `{ ${'ticks { edges { node { holders { edges { node { tick '.repeat(Math.ceil(n / 6))}__typename${' } } } } } }'.repeat(Math.ceil(n / 6))} }`),
  fc.integer({ min: 10, max: 200 }).map((n) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: chains { chain }`).join(' ')} }`),
  fc.integer({ min: 100, max: 20_000 }).map((n) => `{ ${'__typename '.repeat(n)}}`),
  fc.integer({ min: 1, max: 1_000 }).map((n) => `{ ticks(first: ${n}) { edges { node { tick holders(first: ${n}) { edges { node { address balance tick { holders(first: ${n}) { totalCount } } } } } } } } }`),
  fc.integer({ min: 2, max: 12 }).map((n) => `{ __schema { types { ${'fields { type { ofType { '.repeat(n)}name${' } } }'.repeat(n)} } } }`),
  fc.integer({ min: 1, max: 500 }).map((n) => `{ __typename ${'@include(if: true) '.repeat(n)}}`),
  fc.integer({ min: 1, max: 200 }).map((n) => `{ chains(names: [${'"eth", '.repeat(n)}]) { chain } }`),
  fc.constant(getIntrospectionQuery()),
);
const oddDocuments = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.tuple(schemaDocument, fc.nat()).map(([d, n]) => d.slice(0, n % (d.length + 1))),
  fc.constantFrom(
    '', ' ', '{', '}', '{}', 'query', 'query Q($a: Int) { ticks(first: $a) { totalCount } }', '{ ...A } fragment A on Query { ...A }',
    '{ ...Missing }', 'fragment A on Query { __typename }', 'mutation { x }', 'subscription { x }', 'query A { __typename } query B { __typename }',
    '{ __typename @nope }', '{ tick(chain: "eth") { tick } }', '{ ticks(first: -1) { totalCount } }', '{ ticks(after: "x") { totalCount } }',
    '{ ticks(after: "WyIxIl0") { totalCount } }', '{ holders { x } }', '# only a comment', '{ __type(name: "Tick") { fields { name } } }',
    '{ "str" }', '{ a: b: c }', '{ ticks(first: 1, first: 2) { totalCount } }', `{ tick(chain: "eth", protocol: "erc-20", tick: "${'\\u0000'}") { tick } }`,
  ),
);
const document = fc.oneof({ weight: 10, arbitrary: schemaDocument }, { weight: 3, arbitrary: floods }, { weight: 3, arbitrary: oddDocuments });

const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), hostileString, fc.constant(null));
const variables = fc.oneof(
  { weight: 8, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.dictionary(fc.constantFrom('a', 'b', 'first', 'n', '__proto__'), jsonValue, { maxKeys: 3 }) },
  { weight: 1, arbitrary: jsonValue },
);
const variableDocument = fc.tuple(fc.constantFrom('Int', 'Int!', 'String', '[String!]', 'TickOrderField', 'Decimal', 'Boolean'), fc.constantFrom('ticks(first: $a)', 'tick(chain: $a, protocol: $a, tick: $a)', 'chains(names: $a)', 'ticks(orderBy: $a)', 'balances(address: $a)'))
  .map(([type, field]) => `query Q($a: ${type}) { ${field} { __typename } }`);

interface GraphqlRequest { kind: string; method: string; path: string; headers: Record<string, string>; body?: string | Buffer }
const acceptHeader = fc.oneof(
  { weight: 16, arbitrary: fc.constantFrom('application/json', 'application/graphql-response+json', '*/*', 'application/json, */*;q=0.5') },
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('application/xml', 'text/plain', 'image/png', 'application/json; charset=latin1') },
);
const envelope = fc.record({
  query: fc.oneof({ weight: 12, arbitrary: fc.oneof({ weight: 5, arbitrary: document }, variableDocument) }, jsonValue),
  variables,
  operationName: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, fc.constantFrom('Q', 'A', 'B', ''), jsonValue),
  extensions: fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, jsonValue, fc.constant({ persistedQuery: { version: 1, sha256Hash: 'x' } })),
  extra: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, fc.constant(true)),
}).map(({ extra, ...e }) => JSON.stringify({ ...e, ...(extra ? { foo: 1 } : {}) }));
const invalidUtf8 = fc.tuple(envelope, fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]), fc.nat())
  .map(([json, bad, at]) => {
    const bytes = Buffer.from(json);
    const i = at % (bytes.length + 1);
    return Buffer.concat([bytes.subarray(0, i), Buffer.from(bad), bytes.subarray(i)]);
  });
/** Percent-encoding that never throws: a lone surrogate goes out as U+FFFD, as a browser would send it. */
const urlEncode = (text: string) => encodeURIComponent(Buffer.from(text).toString());
const over = (n: number) => `{"query":"{ tick(chain: \\"${'x'.repeat(n)}\\", protocol: \\"a\\", tick: \\"b\\") { tick } }"}`;

const requestArb: fc.Arbitrary<GraphqlRequest> = fc.tuple(
  fc.oneof(
    { weight: 40, arbitrary: envelope.map((body) => ({ kind: 'json envelope', body })) },
    { weight: 5, arbitrary: fc.array(envelope, { maxLength: 12 }).map((list) => ({ kind: 'batch', body: `[${list.join(',')}]` })) },
    { weight: 5, arbitrary: fc.oneof(fc.string({ maxLength: 60 }), fc.tuple(envelope, fc.nat()).map(([e, n]) => e.slice(0, n % e.length)), fc.constantFrom('', 'null', '5', '"q"', '{"query":', '{"query":"{__typename}"}{}', '\uFEFF{}'))
      .map((body) => ({ kind: 'invalid json', body })) },
    { weight: 4, arbitrary: invalidUtf8.map((body) => ({ kind: 'invalid utf-8', body })) },
    { weight: 4, arbitrary: fc.tuple(document, fc.option(fc.string({ maxLength: 30 }))).map(([q, v]) => ({
      kind: 'GET', method: 'GET', body: undefined, query: `?query=${urlEncode(q)}${v === null ? '' : `&variables=${urlEncode(v)}`}` })) },
    { weight: 1, arbitrary: fc.constantFrom('?query=%E0%A4%A', '?query=%', '?query=%7B__typename%7D&variables=%ZZ', '?query=%00', '?variables=%7B%7D&query=', '?query=%7B__typename%7D&query=%7Bx%7D')
      .map((query) => ({ kind: 'GET', method: 'GET', body: undefined, query })) },
    { weight: 3, arbitrary: document.map((q) => ({ kind: 'application/graphql', contentType: 'application/graphql', body: q })) },
    { weight: 3, arbitrary: fc.tuple(document, fc.string({ maxLength: 20 })).map(([q, v]) => ({ kind: 'form', contentType: 'application/x-www-form-urlencoded', body: `query=${urlEncode(q)}&variables=${v}` })) },
    { weight: 2, arbitrary: envelope.map((body) => ({ kind: 'odd content type', contentType: 'text/plain', body })) },
    { weight: 2, arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH').map((method) => ({ kind: 'wrong verb', method, body: '{"query":"{__typename}"}' })) },
    { weight: 1, arbitrary: fc.integer({ min: 900_000, max: 1_000_000 }).map((n) => ({ kind: '1 MB string', body: over(n) })) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 100_000 }).map((n) => ({ kind: 'over the body limit', body: over(testConfig.GRAPHQL_MAX_BODY_BYTES + n) })) },
  ),
  acceptHeader,
).map(([r, accept]) => {
  const x = r as { kind: string; method?: string; body?: string | Buffer; contentType?: string; query?: string };
  const headers: Record<string, string> = {};
  if (accept) headers.accept = accept;
  if (x.body !== undefined) headers['content-type'] = x.contentType ?? 'application/json';
  return { kind: x.kind, method: x.method ?? 'POST', path: `/graphql${x.query ?? ''}`, headers, body: x.body };
});

// --- the checks ---------------------------------------------------------------------------------------
const codes = new Tally();
const statuses = new Tally();
const kinds = new Tally();
let tried = 0;

function check(request: GraphqlRequest, reply: Exchange) {
  const context = `${request.kind} ${request.method} → ${reply.status}: ${String(request.body ?? request.path).slice(0, 300)}`;
  tried++;
  statuses.add(reply.status);
  kinds.add(request.kind);
  expectNoLeak(reply.text, context);
  expect([200, 400, 405, 406, 413, 415, 431], `${context}\n${reply.text.slice(0, 300)}`).toContain(reply.status);
  if (reply.status === 413) expect(Buffer.byteLength(request.body ?? ''), context).toBeGreaterThan(testConfig.GRAPHQL_MAX_BODY_BYTES);
  if (reply.status === 405) expect(request.method !== 'POST', context).toBe(true);
  expect(reply.contentType, `${context}\n${reply.text.slice(0, 300)}`).toMatch(/^application\/(graphql-response\+)?json/);
  let body: any;
  expect(() => { body = JSON.parse(reply.text); }, `${context}: not JSON: ${reply.text.slice(0, 200)}`).not.toThrow();
  expect(body, context).toBeTypeOf('object');
  expect('data' in body || 'errors' in body, context).toBe(true);
  if (!body.errors) return codes.add('data');
  expect(Array.isArray(body.errors) && body.errors.length > 0, context).toBe(true);
  for (const error of body.errors) {
    expect(error.message, context).toBeTypeOf('string');
    const code = error.extensions?.code;
    expect(documentedCodes.has(code), `${context}: code ${code} (${error.message})`).toBe(true);
    codes.add(code);
  }
}

const gw = useGateway({
  load: async (db) => {
    await hostileFixture().load(db.sql);
  },
});
const probeQuery = JSON.stringify({ query: '{ ticks(first: 3) { totalCount edges { node { tick stats { holders } } } } }' });

describe('GraphQL under hostile input', () => {
  it(`answers ${REQUESTS} generated hostile requests with documented error codes only, leaking nothing`, async () => {
    const prober = startProber(async () => {
      const reply = await send(`${gw.base}/graphql`, { headers: { 'content-type': 'application/json' }, body: probeQuery });
      if (reply.status !== 200 || !JSON.parse(reply.text).data?.ticks) throw new Error(`probe failed: ${reply.status} ${reply.text.slice(0, 200)}`);
    });
    const started = performance.now();
    const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: CONCURRENCY, maxLength: CONCURRENCY }), async (requests) => {
        await pool(requests, CONCURRENCY, async (request) => {
          check(request, await send(`${gw.base}${request.path}`, { method: request.method, headers: request.headers, body: request.body }));
        });
      }),
      // no shrinking: each step is network round trips; the failing batch is reported as it was
      { numRuns: Math.ceil(REQUESTS / CONCURRENCY), seed, endOnFailure: true },
    );
    const seconds = (performance.now() - started) / 1000;
    const probe = await prober.stop();
    console.info(
      `[hardening.graphql] ${tried} requests in ${seconds.toFixed(1)} s; by status: ${statuses}; errors by code: ${codes}; ` +
      `request kinds: ${kinds}; probe: ${probe.count} sent, p50 ${probe.p50.toFixed(0)} ms, max ${probe.max.toFixed(0)} ms, ` +
      `failures ${probe.failures.length}`,
    );
    expect(tried).toBeGreaterThanOrEqual(REQUESTS);
    expect(probe.failures).toEqual([]);
    expect(probe.max).toBeLessThan(SLOWED_TO_A_TIMEOUT_MS);
  }, 300_000);

  it('is healthy afterwards', async () => {
    expect((await fetch(`${gw.base}/readyz`)).status).toBe(200);
    const reply = await send(`${gw.base}/graphql`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ ticks(first: 100, orderBy: ID, direction: ASC) { totalCount edges { node { tick } } } }' }) });
    const body = JSON.parse(reply.text);
    expect(body.data.ticks.totalCount).toBe(hostileTicks.length);
    expect(body.data.ticks.edges.map((e: any) => e.node.tick)).toEqual(hostileTicks);
  });
});

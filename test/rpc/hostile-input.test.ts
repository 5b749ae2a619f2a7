import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRpcTables } from '../../src/rpc/tables.js';
import type { MethodSpec, ParamSpec } from '../../src/rpc/declaration.js';
import { testConfig } from '../support/db.js';
import { useGateway } from '../support/gateway.js';
import { post } from '../support/http.js';
import {
  expectNoLeak, hostileFixture, hostileString, hostileTicks, pool, send, startProber, Tally, type Exchange,
} from '../support/hostile.js';

// Generative test of the JSON-RPC surface: thousands of hostile requests (bad JSON, bad envelopes, wrong
// param types and counts, huge and negative numbers, floats, NaN-like strings, deep nesting, 1 MB
// strings, invalid UTF-8, control characters, SQL/LIKE metacharacters, unicode look-alikes, batches of
// every size). Every reply must be a well-formed JSON-RPC reply with a documented code, no 5xx but the
// documented 413/405, nothing internal in it, and an ordinary request sent alongside must never stall.

const REQUESTS = Number(process.env.HARDENING_REQUESTS ?? 5_000);
const CONCURRENCY = 4;
/** An ordinary request that takes this long has been starved (the default statement_timeout). */
const SLOWED_TO_A_TIMEOUT_MS = 5_000;
const documentedCodes = new Set([-32700, -32600, -32601, -32602, -32603]);

/** JSON text that may hold raw tokens (huge numbers, NaN, deep nesting) that JSON.stringify cannot write. */
class Raw {
  constructor(readonly text: string) {}
}
function toJson(value: unknown): string {
  if (value instanceof Raw) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

// --- values -------------------------------------------------------------------------------------------
const rawNumbers = [
  '1e309', '-1e309', '123456789012345678901234567890', '-0', '1.0', '1e2', '0.1', '-9007199254740993', '9007199254740993',
  '2147483648', '-2147483649', '4294967296', '1E400', '5e-324', '0.000000000000000000000001',
];
const hostileNumber = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 20 }) },
  { weight: 3, arbitrary: fc.integer({ min: -5, max: 1_100 }) },
  { weight: 2, arbitrary: fc.integer() },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) },
  { weight: 2, arbitrary: fc.constantFrom(...rawNumbers).map((t) => new Raw(t)) },
  { weight: 1, arbitrary: fc.bigInt().map((b) => new Raw(b.toString())) },
);
const nestedRaw = (maxDepth: number) => fc.tuple(fc.integer({ min: 10, max: maxDepth }), fc.constantFrom('[]', '{}')).map(([n, kind]) =>
  new Raw(kind === '[]' ? '['.repeat(n) + ']'.repeat(n) : '{"a":'.repeat(n) + '1' + '}'.repeat(n)));
/** Nesting a JSON parser can still take apart, as a value… */
const deepNesting = nestedRaw(500);
/** …and nesting meant to exhaust a recursive parser (a body of its own). */
const abyss = nestedRaw(100_000);
const scalar = fc.oneof(hostileString, hostileNumber, fc.boolean(), fc.constant(null));
const nested = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, tie('array'), tie('object')),
  array: fc.array(tie('node'), { maxLength: 4 }),
  object: fc.dictionary(fc.string({ maxLength: 8 }), tie('node'), { maxKeys: 4 }),
})).node;
const hostileValue = fc.oneof(
  { weight: 6, arbitrary: scalar },
  { weight: 2, arbitrary: nested },
  { weight: 1, arbitrary: deepNesting },
  { weight: 1, arbitrary: fc.array(hostileString, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.array(fc.record({ chain: scalar, deploy_hash: scalar }, { requiredKeys: [] }), { maxLength: 3 }) },
);

// --- envelopes ----------------------------------------------------------------------------------------
const tables = createRpcTables();
const methods = [...tables.v2, ...tables.v1.filter((m) => !tables.v2.includes(m))];
const methodNames = methods.flatMap((m) => m.names);
const v1Only = tables.v1.filter((m) => !tables.v2.includes(m));
const hostileMethod = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...methodNames) },
  { weight: 2, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'rpc.discover', 'rpc.', '', ' inds_getTicks', 'INDS_GETTICKS', 'inds_getTicks\u0000') },
  { weight: 2, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.oneof(hostileNumber, fc.constant(null), fc.constant([]), fc.constant({})) },
);
const hostileId = fc.oneof(
  fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.constantFrom(...rawNumbers).map((t) => new Raw(t)),
  fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constant([]), fc.constant({}), fc.boolean(),
);
const jsonrpcMember = fc.oneof({ weight: 8, arbitrary: fc.constant('2.0') }, fc.constantFrom('1.0', 2, '2', null, true, '2.0 ', 2.0));

const numberParam = fc.oneof({ weight: 6, arbitrary: hostileNumber }, { weight: 1, arbitrary: hostileValue });
const stringParam = fc.oneof({ weight: 8, arbitrary: hostileString }, { weight: 1, arbitrary: hostileValue });
const paramFor = (spec: ParamSpec) =>
  ['limit', 'offset', 'int', 'direction'].includes(spec.type) ? numberParam : spec.type === 'string' ? stringParam : hostileValue;
/** A call to a real method, params shaped after one of its layouts (types mostly right, values hostile). */
const typedCallOf = (specs: readonly MethodSpec[]) => fc.oneof(...specs.flatMap((spec) => spec.layouts.map((layout) => fc.record({
  jsonrpc: jsonrpcMember,
  id: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 1e9 }) }, hostileId),
  method: fc.constantFrom(...spec.names),
  // the layout's params, then a few too many, cut at a random count
  params: fc.tuple(fc.tuple(...layout.map(paramFor)), fc.array(hostileValue, { maxLength: 2 }), fc.nat(layout.length + 2))
    .map(([params, extra, count]) => [...params, ...extra].slice(0, count)),
}, { requiredKeys: ['jsonrpc', 'method', 'params'] }))));
const typedCall = typedCallOf(methods);
/** Calls sent where their method is served: v2 methods (and rpc.discover) on /v2/rpc, v1 ones on /v1/rpc. */
const servedCall = fc.oneof(
  { weight: 4, arbitrary: typedCallOf(tables.v2).map((c) => ['/v2/rpc', toJson(c)] as const) },
  { weight: 1, arbitrary: typedCallOf(v1Only).map((c) => ['/v1/rpc', toJson(c)] as const) },
);
const looseEnvelope = fc.record({
  jsonrpc: jsonrpcMember,
  id: hostileId,
  method: hostileMethod,
  params: fc.oneof({ weight: 4, arbitrary: fc.array(hostileValue, { maxLength: 10 }) }, fc.dictionary(fc.string({ maxLength: 8 }), hostileValue, { maxKeys: 3 }), hostileValue),
  result: hostileValue,
  error: hostileValue,
}, { requiredKeys: [] });
const element = fc.oneof({ weight: 4, arbitrary: typedCall }, { weight: 3, arbitrary: looseEnvelope }, { weight: 1, arbitrary: hostileValue });

// --- bodies -------------------------------------------------------------------------------------------
const utf8 = (text: string) => Buffer.from(text, 'utf8');
const invalidUtf8 = fc.tuple(typedCall.map(toJson), fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80]), fc.nat())
  .map(([json, bad, at]) => {
    const bytes = utf8(json);
    const i = at % (bytes.length + 1);
    return Buffer.concat([bytes.subarray(0, i), Buffer.from(bad), bytes.subarray(i)]);
  });
const invalidJson = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.tuple(typedCall.map(toJson), fc.nat()).map(([json, n]) => json.slice(0, n % json.length)),
  fc.constantFrom('', ' ', '\n', 'null', '{', '[', '[,]', '{"jsonrpc":"2.0",}', "{'jsonrpc':'2.0'}", 'NaN', '[1,]', '{"a":1}{"b":2}', '\uFEFF{}', '\u0000'),
  fc.tuple(fc.constantFrom(...methodNames), fc.constantFrom('NaN', 'Infinity', '-Infinity', 'undefined', '0x10', '+1', '01', '.5', "'x'"))
    .map(([m, token]) => `{"jsonrpc":"2.0","id":1,"method":"${m}","params":[${token}]}`),
);
const megaString = fc.tuple(fc.constantFrom('a', "'", '%', '\\\\', 'é', '𝕏', '\\u0000'), fc.constantFrom(...methodNames))
  .map(([unit, m]) => `{"jsonrpc":"2.0","id":1,"method":"${m}","params":[10,0,"${unit.repeat(Math.floor(1_000_000 / unit.length))}"]}`);
const tooLarge = fc.constantFrom(...methodNames).map((m) => `{"jsonrpc":"2.0","id":1,"method":"${m}","params":["${'x'.repeat(testConfig.RPC_MAX_BODY_BYTES)}"]}`);
const batch = fc.oneof(
  { weight: 6, arbitrary: fc.array(element, { maxLength: 8 }) },
  { weight: 1, arbitrary: fc.array(fc.oneof(looseEnvelope, hostileValue), { minLength: testConfig.RPC_MAX_BATCH - 3, maxLength: testConfig.RPC_MAX_BATCH + 20 }) },
).map(toJson);

interface HostileRequest { method: string; path: string; contentType?: string; body: string | Buffer; kind: string }
const requestArb: fc.Arbitrary<HostileRequest> = fc.record({
  method: fc.oneof({ weight: 30, arbitrary: fc.constant('POST') }, fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS')),
  path: fc.oneof({ weight: 6, arbitrary: fc.constant('/v2/rpc') }, { weight: 2, arbitrary: fc.constant('/v1/rpc') }, fc.constantFrom('/v2/rpc/', '/v2', '/v2/rpc/inds_getTicks'), fc.string({ unit: 'grapheme-ascii', maxLength: 12 }).map((s) => `/v2/rpc/${encodeURIComponent(s)}`)),
  contentType: fc.option(fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'), { nil: undefined }),
  body: fc.oneof(
    { weight: 30, arbitrary: servedCall.map(([path, c]) => ['call', c, path] as const) },
    { weight: 15, arbitrary: looseEnvelope.map((e) => ['envelope', toJson(e)] as const) },
    { weight: 12, arbitrary: batch.map((b) => ['batch', b] as const) },
    { weight: 8, arbitrary: invalidJson.map((t) => ['invalid json', t] as const) },
    { weight: 5, arbitrary: invalidUtf8.map((b) => ['invalid utf-8', b] as const) },
    { weight: 3, arbitrary: hostileValue.map((v) => ['bare value', toJson(v)] as const) },
    { weight: 3, arbitrary: abyss.map((d) => ['deep nesting', `{"jsonrpc":"2.0","id":1,"method":"inds_getTicks","params":${d.text}}`] as const) },
    { weight: 1, arbitrary: megaString.map((t) => ['1 MB string', t] as const) },
    { weight: 1, arbitrary: tooLarge.map((t) => ['over the body limit', t] as const) },
  ),
}, { requiredKeys: ['method', 'path', 'body'] }).map(({ body, path, ...rest }) => ({
  ...rest, kind: body[0], body: body[1], path: (body.length > 2 ? body[2] : undefined) ?? path,
}));

// --- the checks ---------------------------------------------------------------------------------------
const codes = new Tally();
const statuses = new Tally();
const kinds = new Tally();
let tried = 0;
let elements = 0;

function checkReplyObject(reply: any, context: string) {
  expect(reply, context).toBeTypeOf('object');
  expect(Object.keys(reply).every((k) => ['jsonrpc', 'result', 'error', 'id'].includes(k)), context).toBe(true);
  expect(reply.jsonrpc, context).toBe('2.0');
  expect('id' in reply, context).toBe(true);
  expect('result' in reply !== 'error' in reply, `${context}: exactly one of result and error`).toBe(true);
  elements++;
  if ('result' in reply) return codes.add('result');
  const { code, message } = reply.error;
  expect(Number.isInteger(code) && documentedCodes.has(code), `${context}: code ${code}`).toBe(true);
  expect(message, context).toBeTypeOf('string');
  if (reply.error.data !== undefined) expect(reply.error.data, context).toBeTypeOf('object');
  codes.add(code);
}

function check(request: HostileRequest, reply: Exchange) {
  const context = `${request.kind} ${request.method} ${request.path} → ${reply.status}`;
  tried++;
  statuses.add(reply.status);
  kinds.add(request.kind);
  expectNoLeak(reply.text, context);
  if (request.method === 'OPTIONS') return expect(reply.status, context).toBe(204);
  if (request.method !== 'POST') expect(reply.status, context).toBe(405);
  if (reply.status === 413) expect(Buffer.byteLength(request.body), context).toBeGreaterThan(testConfig.RPC_MAX_BODY_BYTES);
  if (reply.status === 204) return expect(reply.text, context).toBe('');
  expect([200, 405, 413], context).toContain(reply.status);
  expect(reply.contentType, context).toMatch(/^application\/json/);
  let parsed: unknown;
  expect(() => { parsed = JSON.parse(reply.text); }, `${context}: not JSON: ${reply.text.slice(0, 200)}`).not.toThrow();
  if (Array.isArray(parsed)) {
    expect(parsed.length, context).toBeGreaterThan(0);
    parsed.forEach((r, i) => checkReplyObject(r, `${context} [${i}]`));
  } else {
    checkReplyObject(parsed, context);
  }
}

const gw = useGateway({
  load: async (db) => {
    await hostileFixture().load(db.sql);
  },
});

describe('JSON-RPC under hostile input', () => {
  it(`answers ${REQUESTS} generated hostile requests with documented errors only, leaking nothing`, async () => {
    const prober = startProber(async () => {
      const reply = await post(gw.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [5, 0, '', '', '', '', 0, 2] });
      if (reply.status !== 200 || !reply.json?.result) throw new Error(`probe failed: ${reply.status} ${reply.text.slice(0, 200)}`);
    });
    const started = performance.now();
    const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : undefined;
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb, { minLength: CONCURRENCY, maxLength: CONCURRENCY }), async (requests) => {
        await pool(requests, CONCURRENCY, async (request) => {
          const reply = await send(`${gw.base}${request.path}`, {
            method: request.method,
            headers: request.contentType ? { 'content-type': request.contentType } : {},
            body: request.method === 'GET' ? undefined : request.body,
          });
          check(request, reply);
        });
      }),
      // no shrinking: each step is network round trips; the failing batch is reported as it was
      { numRuns: Math.ceil(REQUESTS / CONCURRENCY), seed, endOnFailure: true },
    );
    const seconds = (performance.now() - started) / 1000;
    const probe = await prober.stop();
    console.info(
      `[hardening.rpc] ${tried} requests (${elements} replies) in ${seconds.toFixed(1)} s; by status: ${statuses}; ` +
      `replies by code: ${codes}; request kinds: ${kinds}; probe: ${probe.count} sent, p50 ${probe.p50.toFixed(0)} ms, ` +
      `max ${probe.max.toFixed(0)} ms, failures ${probe.failures.length}`,
    );
    expect(tried).toBeGreaterThanOrEqual(REQUESTS);
    expect(probe.failures).toEqual([]);
    expect(probe.max).toBeLessThan(SLOWED_TO_A_TIMEOUT_MS);
    // nothing unexpected and nothing slowed to a timeout
    expect(codes.get(-32604)).toBe(0);
    expect(codes.get(-32000)).toBe(0);
    for (const status of statuses.counts.keys()) expect(Number(status)).not.toBeGreaterThanOrEqual(500);
  }, 300_000);

  it('is healthy afterwards', async () => {
    const ready = await fetch(`${gw.base}/readyz`);
    expect(ready.status).toBe(200);
    const reply = await post(gw.base, { jsonrpc: '2.0', id: 7, method: 'inds_getTicks', params: [100, 0, '', '', '', '', 0, 1] });
    expect(reply.json.result.total).toBe(hostileTicks.length);
    expect(reply.json.result.inscriptions.map((t: any) => t.tick)).toEqual(hostileTicks);
  });
});

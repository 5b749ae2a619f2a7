import type { initGraphQLTada, ResultOf } from 'gql.tada';
import { isLosslessNumber } from 'lossless-json';
// the one introspection of schema/schema.graphql that gql.tada reads, generated beside it (kept fresh by
// `npm run example:types`; test/clients/typed-client.test.ts fails when it is stale): types only, nothing of it
// runs. It lives in schema/, not in examples/: the image's build stage compiles src/ with schema/ only
import type { introspection } from '../../schema/graphql-env.js';
import { rpcErrors } from './errors.js';

// What an RPC method declaration (src/rpc/methods/<group>.ts) is made of and the strict decoding of its
// positional params, so that a method's every fact lives in its one declaration.

export type ParamType =
  | 'limit' // page size: integer ≥ 0, clamped to the configured maximum
  | 'offset' // integer ≥ 0
  | 'int' // integer, optionally one of a set
  | 'direction' // integer: 1 = ascending, anything else descending
  | 'string' // string; '' = no filter
  | 'strings' // array of strings
  | 'selectors'; // array of {chain, deploy_hash}

export interface ParamSpec<Name extends string = string, Type extends ParamType = ParamType> {
  name: Name;
  type: Type;
  default?: unknown;
  oneOf?: readonly number[];
  /** Must be given and not be empty: left out, null or '' is -32602 naming it. */
  required?: boolean;
  /** For the OpenRPC document (over src/rpc/methods/schemas.ts commonParamDescriptions). */
  description?: string;
}

/** What a param of a type decodes to (a default included). */
export type Decoded<Type extends ParamType> =
  Type extends 'limit' | 'offset' | 'int' ? number
    : Type extends 'direction' ? 'ASC' | 'DESC'
    : Type extends 'string' ? string
    : Type extends 'strings' ? string[]
    : { chain: string; deployHash: string }[];

/** The decoded params of a method with these layouts, by name (a param of only some layouts included). */
export type DecodedParams<Layouts extends readonly (readonly ParamSpec[])[]> = {
  [P in Layouts[number][number] as P['name']]: Decoded<P['type']>;
};

export interface PagingLimits {
  defaultPageSize: number;
  maxPageSize: number;
}

const maxInt32 = 2_147_483_647;
const maxStringLength = 1_024;
const maxListLength = 1_000;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (isLosslessNumber(value)) return /[.eE]/.test(value.value) ? `number ${value.value}` : 'integer out of range';
  return typeof value;
}

/** Picks the layout for the number of params sent: exact length first, else the shortest that fits. */
export function pickLayout(layouts: readonly (readonly ParamSpec[])[], count: number): readonly ParamSpec[] | null {
  for (const l of layouts) if (l.length === count) return l;
  return [...layouts].sort((a, b) => a.length - b.length).find((l) => l.length >= count) ?? null;
}

export function decodeParams(
  layouts: readonly (readonly ParamSpec[])[], params: readonly unknown[], limits: PagingLimits,
): Record<string, unknown> {
  const layout = pickLayout(layouts, params.length);
  if (!layout) {
    const most = Math.max(...layouts.map((l) => l.length));
    throw rpcErrors.invalidParams(`too many params: at most ${most} expected, got ${params.length}`);
  }
  const out: Record<string, unknown> = {};
  for (let index = 0; index < layout.length; index++) {
    const spec = layout[index]!;
    out[spec.name] = decodeOne(spec, index + 1, params[index], limits);
  }
  // after the type checks, in position order: a type error anywhere is reported before an empty value
  for (let index = 0; index < layout.length; index++) {
    const spec = layout[index]!;
    if (spec.required && out[spec.name] === '') {
      const position = index + 1;
      throw rpcErrors.invalidParams(`parameter #${position} '${spec.name}' must not be empty`, { position, name: spec.name });
    }
  }
  return out;
}

/** The -32602 error of the param at `position`. */
function failure(spec: ParamSpec, position: number, why: string) {
  return rpcErrors.invalidParams(`parameter #${position} '${spec.name}' ${why}`, { position, name: spec.name });
}

/** The value as a safe integer, or the -32602 error naming the param. */
function integerOf(spec: ParamSpec, position: number, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw failure(spec, position, `must be an integer (got ${describe(value)})`);
  return value;
}

/** An absent (or null) param's value. */
function defaultOf(spec: ParamSpec, limits: PagingLimits): unknown {
  if (spec.type === 'limit') return limits.defaultPageSize;
  if (spec.type === 'offset') return 0;
  if (spec.type === 'direction') return spec.default ?? 'DESC';
  if (spec.type === 'string') return spec.default ?? '';
  if (spec.type === 'strings' || spec.type === 'selectors') return spec.default ?? [];
  return spec.default ?? 0;
}

// no closures made per param: this runs for every param of every call
function decodeOne(spec: ParamSpec, position: number, value: unknown, limits: PagingLimits): unknown {
  if (value === undefined || value === null) return defaultOf(spec, limits);
  switch (spec.type) {
    case 'limit': {
      const n = integerOf(spec, position, value);
      if (n < 0) throw failure(spec, position, 'must be ≥ 0');
      return Math.min(n, limits.maxPageSize);
    }
    case 'offset': {
      const n = integerOf(spec, position, value);
      if (n < 0) throw failure(spec, position, 'must be ≥ 0');
      if (n > maxInt32) throw failure(spec, position, `must be ≤ ${maxInt32}`);
      return n;
    }
    case 'int': {
      const n = integerOf(spec, position, value);
      if (spec.oneOf && !spec.oneOf.includes(n)) throw failure(spec, position, `must be one of ${spec.oneOf.join(', ')} (got ${n})`);
      return n;
    }
    case 'direction':
      return integerOf(spec, position, value) === 1 ? 'ASC' : 'DESC';
    case 'string':
      return decodeString(spec, position, value);
    case 'strings':
      return decodeStrings(spec, position, value);
    case 'selectors':
      return decodeSelectors(spec, position, value);
  }
}

function decodeString(spec: ParamSpec, position: number, value: unknown): string {
  if (typeof value !== 'string') throw failure(spec, position, `must be a string (got ${describe(value)})`);
  if (value.length > maxStringLength) throw failure(spec, position, `must be at most ${maxStringLength} characters`);
  // PostgreSQL text cannot hold U+0000: refuse it here rather than fail in the database (-32604)
  if (value.includes('\u0000')) throw failure(spec, position, 'must not contain NUL characters');
  return value;
}

function decodeStrings(spec: ParamSpec, position: number, value: unknown): string[] {
  if (!Array.isArray(value)) throw failure(spec, position, `must be an array of strings (got ${describe(value)})`);
  if (value.length > maxListLength) throw failure(spec, position, `must have at most ${maxListLength} elements`);
  value.forEach((v, i) => {
    if (typeof v !== 'string') throw failure(spec, position, `element ${i} must be a string (got ${describe(v)})`);
    if (v.length > maxStringLength) throw failure(spec, position, `element ${i} must be at most ${maxStringLength} characters`);
    if (v.includes('\u0000')) throw failure(spec, position, `element ${i} must not contain NUL characters`);
  });
  return value;
}

function decodeSelectors(spec: ParamSpec, position: number, value: unknown): { chain: string; deployHash: string }[] {
  if (!Array.isArray(value)) throw failure(spec, position, `must be an array of {chain, deploy_hash} objects (got ${describe(value)})`);
  if (value.length > maxListLength) throw failure(spec, position, `must have at most ${maxListLength} elements`);
  return value.map((v: unknown, i) => {
    const s = v as { chain?: unknown; deploy_hash?: unknown } | null;
    if (typeof s !== 'object' || s === null || Array.isArray(s) || typeof s.chain !== 'string' ||
        typeof s.deploy_hash !== 'string' || s.chain.length > maxStringLength || s.deploy_hash.length > maxStringLength) {
      throw failure(spec, position, `element ${i} must be an object with string members chain and deploy_hash`);
    }
    if (s.chain.includes('\u0000') || s.deploy_hash.includes('\u0000')) throw failure(spec, position, `element ${i} must not contain NUL characters`);
    return { chain: s.chain, deployHash: s.deploy_hash };
  });
}

/** '' means "no filter" in the v2 interface; GraphQL says that with null. */
export const filter = (value: unknown): string | null => (value === '' ? null : (value as string));

// --- declarations ----------------------------------------------------------------------------------------

export type Schema = Record<string, unknown>;

export interface ExampleSpec {
  name: string;
  summary?: string;
  params: unknown[];
}

/** The documentation of a method (what the OpenRPC document says beyond the params). */
export interface MethodDoc {
  summary: string;
  description?: string;
  /** Result schema, JSON Schema draft-07 (may reference #/components/schemas/*). */
  result: Schema;
  resultName?: string;
  /** When the method answers -32603 Record not found: what was not found. */
  notFound?: string;
  /** Examples, run against the demo dataset by `npm run openrpc:print` (their results are recorded). */
  examples?: readonly ExampleSpec[];
}

// --- typed documents ----------------------------------------------------------------------------------
// A method's GraphQL document stays a plain string at run time; at compile time gql.tada parses its
// literal type against the schema, so `reshape` gets the result type of exactly that document.

type Tada = ReturnType<typeof initGraphQLTada<{
  introspection: introspection;
  scalars: { Decimal: string; BigInt: string; DateTime: string };
  disableMasking: true;
}>>;
declare const graphql: Tada; // a type only: never called
/** The result (`data`) type of the GraphQL document whose text is S. */
// @ts-expect-error gql.tada's first overload (its persisted-document cache) takes no document type; TypeScript
// reports it and then instantiates the second, the document parser, which is the one used here
export type Result<S extends string> = ResultOf<ReturnType<typeof graphql<S, []>>>;

/** What reshape gets: its document's result; in a table of methods of different documents, unknown. */
type Data<Document extends string> = string extends Document ? unknown : Result<Document>;

/** Decoded params by name, as a table of methods with different params sees them. */
export type Params = Record<string, unknown>;

/** One RPC method: names, positional params, the GraphQL document it runs, the v2 reshape and its docs. */
/** What a method may know of the HTTP request it answers. */
export interface RequestInfo {
  /** Where the client reached the gateway (`PUBLIC_URL`, else `http://` + its Host header), or null if unknown. */
  baseUrl: string | null;
}

export interface MethodSpec<Document extends string = string, P = Params> {
  /** Canonical name first, then aliases (renamed or older names). */
  names: readonly string[];
  /** Accepted positional layouts; the one whose length equals the params sent wins. */
  layouts: readonly (readonly ParamSpec[])[];
  document: Document;
  variables(p: P): Record<string, unknown>;
  /** `request` is where the call came from; only rpc.discover reads it (so twins may leave it out). */
  reshape(data: Data<Document>, p: P, request?: RequestInfo): unknown;
  doc: MethodDoc;
  /** Never answered from the response cache (an answer that depends on the request, not only on the data). */
  uncached?: true;
  /** Per alias: its own summary (and examples); everything else is the canonical name's. */
  aliases?: Readonly<Record<string, { summary: string; examples?: readonly ExampleSpec[] }>>;
  /** v1 methods: the canonical name of the v2 method they are the same operation as. */
  twinOf?: string;
}

/**
 * A method declaration whose variables and reshape are checked against its own params (as its layouts
 * decode them) and its own document's result type.
 */
export const method = <const Document extends string, const Layouts extends readonly (readonly ParamSpec[])[]>(
  spec: MethodSpec<Document, DecodedParams<Layouts>> & { layouts: Layouts },
): MethodSpec =>
  // the table holds methods of different documents: each was checked here against its own
  spec as unknown as MethodSpec;

// --- params ----------------------------------------------------------------------------------------

// (names and types keep their literal types: a method's decoded params are typed from its layouts)
type Extra = Omit<Partial<ParamSpec>, 'name' | 'type'>;
export const limit: ParamSpec<'limit', 'limit'> = { name: 'limit', type: 'limit' };
export const offset: ParamSpec<'offset', 'offset'> = { name: 'offset', type: 'offset' };
/** A string param; '' (or left out) = no filter unless `required`. */
export const text = <const Name extends string>(name: Name, extra: Extra = {}): ParamSpec<Name, 'string'> =>
  ({ name, type: 'string', ...extra });
/** A string param that must be given and not be empty (-32602 naming it otherwise). */
export const required = <const Name extends string>(name: Name, extra: Extra = {}): ParamSpec<Name, 'string'> =>
  text(name, { ...extra, required: true });
export const chainList: ParamSpec<'chains', 'strings'> = { name: 'chains', type: 'strings' };
export const direction = <const Name extends string>(name: Name): ParamSpec<Name, 'direction'> =>
  ({ name, type: 'direction', description: '1 = ascending, anything else descending.' });

// --- GraphQL variables and results -------------------------------------------------------------------

export const paging = (p: { limit: number; offset: number }) => ({ first: p.limit, offset: p.offset });
export const list = <T>(connection: { edges: { node: T }[] }) => connection.edges.map((e) => e.node);

import { readFileSync } from 'node:fs';
import type { MethodSpec } from './methods.js';
import { v1Twins } from './methods-v1.js';
import { commonParamDescriptions, componentSchemas, methodDocs, v1Examples, type ExampleSpec, type MethodDoc } from './openrpc-docs.js';
import { pickLayout, type PagingLimits, type ParamSpec } from './params.js';

// schema/openrpc.json, the machine-readable contract: an OpenRPC 1.3 document generated from the RPC
// method tables (names, aliases, positional params with their types and defaults) and the method docs
// (src/rpc/openrpc-docs.ts: summaries, result schemas, errors, examples). Example results are not
// written by hand: `npm run openrpc:print` runs every example against the demo dataset and records
// what the gateway answered, and test/openrpc.test.ts checks that it still answers exactly that.

export interface RpcTables {
  v1: readonly MethodSpec[];
  v2: readonly MethodSpec[];
}

type Json = Record<string, unknown>;

/** Recorded example results, by exampleKey(method, example name). */
export type ExampleResults = ReadonlyMap<string, unknown>;
export const exampleKey = (method: string, example: string) => `${method} ${example}`;

export const openRpcVersion = '1.3.2';

// the limits of src/rpc/params.ts (string and list params)
const maxStringLength = 1_024;
const maxListLength = 1_000;
const maxInt32 = 2_147_483_647;

const servers = {
  v2: { name: 'v2', url: '{baseUrl}/v2/rpc', variables: { baseUrl: { default: 'http://127.0.0.1:8080' } } },
  v1: { name: 'v1', url: '{baseUrl}/v1/rpc', variables: { baseUrl: { default: 'http://127.0.0.1:8080' } } },
};

const errors = {
  ParseError: { code: -32700, message: 'Parse error' },
  InvalidRequest: { code: -32600, message: 'Invalid request' },
  MethodNotFound: { code: -32601, message: 'Method not found' },
  InvalidParams: { code: -32602, message: 'Invalid params' },
  RecordNotFound: { code: -32603, message: 'Record not found' },
  InternalError: { code: -32604, message: 'Internal error' },
  ServiceUnavailable: { code: -32000, message: 'Service unavailable' },
};
const errorRef = (name: keyof typeof errors) => ({ $ref: `#/components/errors/${name}` });

function paramSchema(spec: ParamSpec, limits: PagingLimits): Json {
  switch (spec.type) {
    case 'limit':
      return { type: 'integer', minimum: 0, default: limits.defaultPageSize, description: `Clamped to ${limits.maxPageSize}.` };
    case 'offset':
      return { type: 'integer', minimum: 0, maximum: maxInt32, default: 0 };
    case 'int':
      return { type: 'integer', ...(spec.oneOf ? { enum: [...spec.oneOf] } : {}), default: spec.default ?? 0 };
    case 'direction':
      return { type: 'integer', default: 2, description: '1 = ascending, anything else descending.' };
    case 'string':
      return { type: 'string', maxLength: maxStringLength, default: spec.default ?? '' };
    case 'strings':
      return { type: 'array', items: { type: 'string', maxLength: maxStringLength }, maxItems: maxListLength, default: [] };
    case 'selectors':
      return {
        type: 'array',
        maxItems: maxListLength,
        default: [],
        items: {
          type: 'object',
          properties: { chain: { type: 'string', maxLength: maxStringLength }, deploy_hash: { type: 'string', maxLength: maxStringLength } },
          required: ['chain', 'deploy_hash'],
        },
      };
  }
}

function contentDescriptors(layout: readonly ParamSpec[], doc: MethodDoc, limits: PagingLimits): Json[] {
  return layout.map((spec, position) => {
    const description = doc.params?.[spec.name] ?? commonParamDescriptions[spec.name];
    return {
      name: spec.name,
      ...(description ? { description } : {}),
      required: doc.required?.includes(spec.name) ?? false,
      schema: paramSchema(spec, limits),
      'x-position': position,
    };
  });
}

function examplePairings(method: string, spec: MethodSpec, examples: readonly ExampleSpec[], results?: ExampleResults): Json[] {
  return examples.map((example) => {
    const layout = pickLayout(spec.layouts, example.params.length);
    if (!layout) throw new Error(`example ${example.name} of ${method} has too many params`);
    const key = exampleKey(method, example.name);
    return {
      name: example.name,
      ...(example.summary ? { summary: example.summary } : {}),
      params: example.params.map((value, i) => ({ name: layout[i]!.name, value })),
      ...(results?.has(key) ? { result: { name: 'result', value: results.get(key) } } : {}),
    };
  });
}

interface Entry {
  name: string;
  spec: MethodSpec;
  doc: MethodDoc;
  examples: readonly ExampleSpec[];
  versions: Set<'v1' | 'v2'>;
  extensions: Json;
}

/** Every registered name, in table order (v2 first), with the doc it is described by. */
function entries(tables: RpcTables): Entry[] {
  const byName = new Map<string, Entry>();
  const add = (version: 'v1' | 'v2', spec: MethodSpec) => {
    const [canonical, ...aliases] = spec.names;
    for (const name of spec.names) {
      const seen = byName.get(name);
      if (seen) {
        seen.versions.add(version);
        continue;
      }
      let doc: MethodDoc | undefined;
      let examples: readonly ExampleSpec[] = [];
      const extensions: Json = {};
      if (version === 'v1' && v1Twins[name]) {
        const twin = v1Twins[name]!;
        const twinDoc = methodDocs[twin];
        doc = twinDoc && { ...twinDoc, summary: `v1 name of ${twin}: ${twinDoc.summary}` };
        examples = v1Examples[name] ?? [];
        extensions['x-v2-twin'] = twin;
      } else {
        doc = methodDocs[name];
        examples = doc?.examples ?? [];
        if (name !== canonical) extensions['x-alias-of'] = canonical;
        else if (aliases.length > 0) extensions['x-aliases'] = aliases;
      }
      if (!doc) throw new Error(`method ${name} has no documentation in src/rpc/openrpc-docs.ts`);
      byName.set(name, { name, spec, doc, examples, versions: new Set([version]), extensions });
    }
  };
  tables.v2.forEach((s) => add('v2', s));
  tables.v1.forEach((s) => add('v1', s));
  return [...byName.values()];
}

export function buildOpenRpcDocument(tables: RpcTables, options: { limits: PagingLimits; results?: ExampleResults }): Json {
  const methods = entries(tables).map(({ name, spec, doc, examples, versions, extensions }) => {
    const layouts = [...spec.layouts].sort((a, b) => b.length - a.length);
    const longest = layouts[0] ?? [];
    return {
      name,
      summary: doc.summary,
      ...(doc.description ? { description: doc.description } : {}),
      tags: [...versions].sort().reverse().map((v) => ({ name: v })),
      ...(versions.has('v2') && !versions.has('v1') ? {} : { servers: [...versions].sort().reverse().map((v) => servers[v]) }),
      paramStructure: 'by-position',
      params: contentDescriptors(longest, doc, options.limits),
      result: { name: doc.resultName ?? 'result', schema: doc.result },
      errors: [
        errorRef('InvalidParams'),
        ...(doc.notFound ? [errorRef('RecordNotFound')] : []),
        errorRef('InternalError'),
        errorRef('ServiceUnavailable'),
      ],
      ...(examples.length > 0 ? { examples: examplePairings(name, spec, examples, options.results) } : {}),
      ...(layouts.length > 1 ? { 'x-layouts': layouts.map((l) => l.map((p) => p.name)) } : {}),
      ...(doc.notFound ? { 'x-not-found': doc.notFound } : {}),
      ...extensions,
    };
  });
  return {
    openrpc: openRpcVersion,
    info: {
      title: 'Inscription gateway JSON-RPC',
      version: '2.0.0',
      description:
        'Read-only queries over an index of token inscriptions. Version 2 at /v2/rpc (the default server); the older ' +
        'version 1 names at /v1/rpc (their methods name that server). Params are positional (paramStructure ' +
        'by-position; x-position is the 0-based index): trailing params may be left out or null and take their ' +
        'default; x-layouts lists every accepted arity when there are several. Every method may also answer the ' +
        'transport errors -32700, -32600 and -32601 (components.errors).',
    },
    servers: [servers.v2],
    methods,
    components: { schemas: componentSchemas, errors },
  };
}

/** The example results recorded in a document (to rebuild it with them). */
export function recordedResults(document: Json): Map<string, unknown> {
  const results = new Map<string, unknown>();
  for (const method of (document.methods ?? []) as Json[]) {
    for (const example of (method.examples ?? []) as Json[]) {
      const result = example.result as { value: unknown } | undefined;
      if (result) results.set(exampleKey(method.name as string, example.name as string), result.value);
    }
  }
  return results;
}

export const openRpcFile = new URL('../../schema/openrpc.json', import.meta.url);

let cached: Json | undefined;
/** The checked-in document (read once). */
export function readOpenRpcDocument(): Json {
  return (cached ??= JSON.parse(readFileSync(openRpcFile, 'utf8')) as Json);
}

/** rpc.discover: answers with the checked-in document (kept fresh by test/openrpc.test.ts). */
export function discoverMethod(): MethodSpec {
  return {
    names: ['rpc.discover'],
    layouts: [[]],
    // no data needed: the cheapest valid operation, so the method fits the table's one-document form
    document: 'query Discover { __typename }',
    variables: () => ({}),
    reshape: () => readOpenRpcDocument(),
  };
}

/** The endpoint path of a documented method: its own server when it names one, else /v2/rpc. */
export function methodPath(method: Json): string {
  const own = (method.servers as { name: string }[] | undefined)?.map((s) => s.name) ?? ['v2'];
  return own.includes('v2') ? '/v2/rpc' : '/v1/rpc';
}

export interface ExampleRun {
  method: string;
  example: string;
  path: string;
  params: unknown[];
  /** The JSON-RPC reply object. */
  reply: { result?: unknown; error?: { code: number; message: string } };
}

/** Calls every example of a document on a running gateway (base URL), one at a time. */
export async function runExamples(base: string, document: Json): Promise<ExampleRun[]> {
  const runs: ExampleRun[] = [];
  let id = 0;
  for (const method of document.methods as Json[]) {
    for (const example of (method.examples ?? []) as Json[]) {
      const params = (example.params as { value: unknown }[]).map((p) => p.value);
      const path = methodPath(method);
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method: method.name, params }),
      });
      runs.push({ method: method.name as string, example: example.name as string, path, params, reply: (await response.json()) as ExampleRun['reply'] });
    }
  }
  return runs;
}

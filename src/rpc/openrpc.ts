import { readFileSync } from 'node:fs';
import { commonParamDescriptions, componentSchemas } from './methods/schemas.js';
import { pickLayout, type ExampleSpec, type MethodDoc, type MethodSpec, type PagingLimits, type ParamSpec } from './declaration.js';

// The OpenRPC documents (schema/openrpc.json, openrpc-v1.json) rendered from the method declarations only,
// so that nothing about a method is said twice; example results are recorded from the demo dataset.

export type RpcInterface = 'v1' | 'v2';

export interface RpcTables {
  v1: readonly MethodSpec[];
  v2: readonly MethodSpec[];
}

type Json = Record<string, unknown>;

/** Recorded example results, by exampleKey(method, example name). */
export type ExampleResults = ReadonlyMap<string, unknown>;
export const exampleKey = (method: string, example: string) => `${method} ${example}`;

// the newest version the generated TypeScript client's own dependencies know (its package.json pins
// @open-rpc/meta-schema 1.14.2); the documents use nothing of 1.3 and validate under both
const openRpcVersion = '1.2.6';

// the limits of src/rpc/declaration.ts (string and list params)
const maxStringLength = 1_024;
const maxListLength = 1_000;
const maxInt32 = 2_147_483_647;

/** Where each interface is served. */
export const rpcPaths: Record<RpcInterface, string> = { v2: '/v2/rpc', v1: '/v1/rpc' };

// The meta-schema wants an absolute URI (format uri): a relative one or a {variable} is rejected by the
// validator. The checked-in files name the default listen address; rpc.discover names the one it was asked on.
const servers = (version: RpcInterface, baseUrl = 'http://127.0.0.1:8080') => [{
  name: version,
  url: `${baseUrl}${rpcPaths[version]}`,
  description: `Interface ${version} at ${rpcPaths[version]} of the gateway.`,
}];

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
      return { type: 'string', maxLength: maxStringLength, ...(spec.required ? { minLength: 1 } : { default: spec.default ?? '' }) };
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

/**
 * The params of a layout. OpenRPC forbids a required param after an optional one; where a required param
 * follows optional ones (limit, offset before an address), those are declared required too, with null
 * standing for their default: the wire accepts exactly that (null = the default), so the document stays
 * valid and true while a generated client must send the positions up to the required param, as it must.
 */
function contentDescriptors(layout: readonly ParamSpec[], limits: PagingLimits): Json[] {
  const lastRequired = layout.reduce((last, spec, i) => (spec.required ? i : last), -1);
  return layout.map((spec, position) => {
    const description = spec.description ?? commonParamDescriptions[spec.name];
    const placeholder = !spec.required && position < lastRequired;
    const schema = paramSchema(spec, limits);
    return {
      name: spec.name,
      ...(description || placeholder
        ? { description: [description, placeholder ? 'Positional: send null for the default.' : ''].filter(Boolean).join(' ') }
        : {}),
      required: spec.required === true || placeholder,
      schema: placeholder ? { oneOf: [schema, { type: 'null' }], default: schema.default } : schema,
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

/**
 * Every listed name of a table (canonical names and aliases, in table order) with the doc it is described by.
 */
function entries(table: readonly MethodSpec[]) {
  return table.flatMap((spec) => {
    const [canonical, ...aliases] = spec.names;
    return spec.names.filter(isListed).map((name) => {
      const alias = name === canonical ? undefined : spec.aliases?.[name];
      const doc: MethodDoc = alias
        ? { ...spec.doc, summary: alias.summary, examples: alias.examples ?? [] }
        : name === canonical ? spec.doc : { ...spec.doc, summary: `Alias of ${canonical}.`, examples: [] };
      const extensions: Json = name !== canonical ? { 'x-alias-of': canonical }
        : aliases.length > 0 ? { 'x-aliases': aliases } : {};
      if (spec.twinOf) extensions['x-v2-twin'] = spec.twinOf;
      return { name, spec, doc, extensions };
    });
  });
}

/**
 * A name the document lists: an identifier, since a client generator makes each listed name a class member.
 * Dotted names are answered, not listed: rpc.discover (OpenRPC does not ask for it) and the v1 names, whose
 * identifier spellings are listed instead.
 */
export const isListed = (name: string) => /^[A-Za-z_$][\w$]*$/.test(name);

/** The OpenRPC document of one interface, from its method table. */
export function buildOpenRpcDocument(
  table: readonly MethodSpec[], version: RpcInterface, options: { limits: PagingLimits; results?: ExampleResults },
): Json {
  const methods = entries(table).map(({ name, spec, doc, extensions }) => {
    const layouts = [...spec.layouts].sort((a, b) => b.length - a.length);
    const longest = layouts[0] ?? [];
    const examples = doc.examples ?? [];
    return {
      name,
      summary: doc.summary,
      ...(doc.description ? { description: doc.description } : {}),
      paramStructure: 'by-position',
      params: contentDescriptors(longest, options.limits),
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
  const other = version === 'v2' ? 'v1' : 'v2';
  return {
    openrpc: openRpcVersion,
    info: {
      title: `Inscription gateway JSON-RPC ${version}`,
      version: version === 'v2' ? '2.0.0' : '1.0.0',
      description:
        `Read-only queries over an index of token inscriptions: interface ${version}, served at ${rpcPaths[version]} ` +
        `(interface ${other} is at ${rpcPaths[other]}, with its own document). rpc.discover, OpenRPC's service discovery ` +
        "method, answers this document on its endpoint, with servers naming the address it was asked on (it is not " +
        'listed among the methods). Params are positional (paramStructure by-position; x-position is the 0-based index): trailing ' +
        'params may be left out or null and take their default; a param before a required one is declared required ' +
        'and takes null for its default; x-layouts lists every accepted arity when there are several. Every method may ' +
        'also answer the transport errors -32700, -32600 and -32601 (components.errors).' +
        (version === 'v1' ? ' Each method is listed under the identifier spelling of its dotted name (tick_Holders for ' +
          'tick.Holders, named by x-alias-of); both are answered, in any letter case.' : ''),
    },
    servers: servers(version),
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

export const openRpcFiles: Record<RpcInterface, URL> = {
  v2: new URL('../../schema/openrpc.json', import.meta.url),
  v1: new URL('../../schema/openrpc-v1.json', import.meta.url),
};

const cached: Partial<Record<RpcInterface, Json>> = {};
/** The checked-in document of an interface (read once). */
function readOpenRpcDocument(version: RpcInterface): Json {
  return (cached[version] ??= JSON.parse(readFileSync(openRpcFiles[version], 'utf8')) as Json);
}

/**
 * rpc.discover: the checked-in document of its endpoint (kept fresh by test/rpc/openrpc.test.ts), its server URL
 * where the request was sent (PUBLIC_URL, else the Host header). Never cached: the answer depends on the request.
 */
export function discoverMethod(version: RpcInterface): MethodSpec {
  return {
    names: ['rpc.discover'],
    layouts: [[]],
    // no data needed: the cheapest valid operation, so the method fits the table's one-document form
    document: 'query Discover { __typename }',
    variables: () => ({}),
    reshape: (_data, _p, request) => {
      const document = readOpenRpcDocument(version);
      return request?.baseUrl ? { ...document, servers: servers(version, request.baseUrl) } : document;
    },
    uncached: true,
    doc: { summary: 'This OpenRPC document.', result: { type: 'object' } },
  };
}

export interface ExampleRun {
  method: string;
  example: string;
  path: string;
  params: unknown[];
  /** The JSON-RPC reply object. */
  reply: { result?: unknown; error?: { code: number; message: string } };
}

/** Calls every example of an interface's document on a running gateway (base URL), one at a time. */
export async function runExamples(base: string, document: Json, version: RpcInterface): Promise<ExampleRun[]> {
  const runs: ExampleRun[] = [];
  let id = 0;
  for (const method of document.methods as Json[]) {
    for (const example of (method.examples ?? []) as Json[]) {
      const params = (example.params as { value: unknown }[]).map((p) => p.value);
      const path = rpcPaths[version];
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

import { readFileSync } from 'node:fs';
import * as metaSchemaPackage from '@open-rpc/meta-schema';
import { Ajv } from 'ajv';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import {
  buildOpenRpcDocument, isListed, openRpcFiles, recordedResults, rpcPaths, runExamples, type ExampleRun, type RpcInterface,
} from '../../src/rpc/openrpc.js';
import { createRpcTables } from '../../src/rpc/tables.js';
import { loadDemo, useGateway } from '../support/gateway.js';
import { call } from '../support/http.js';

// schema/openrpc.json (v2) and schema/openrpc-v1.json (v1) are the machine-readable contract of the two
// RPC interfaces, one document each. Each must be exactly what its method table builds (fresh), a valid
// OpenRPC document, complete (every name registered on its endpoint, nothing else), and true: every
// example, run against the demo dataset on its endpoint, succeeds with the recorded result, and that
// result validates against the method's result schema. (test/clients/openrpc-generator.test.ts runs the official
// validator and client generator on them.)

const tables = createRpcTables();
const config = loadConfig({});
const limits = { defaultPageSize: config.DEFAULT_PAGE_SIZE, maxPageSize: config.MAX_PAGE_SIZE };
// the package's typings declare only the document's types, not the exported meta-schema value
const openRpcMetaSchema = (metaSchemaPackage as unknown as { openrpcDocument: Record<string, unknown> }).openrpcDocument;

/** A validator that resolves #/components/* (and any JSON pointer) inside the document. */
function documentValidator(document: Record<string, any>) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addSchema({ ...document, $id: 'openrpc.json' });
  return (pointer: string) => ajv.compile({ $ref: `openrpc.json#${pointer}` });
}

for (const version of ['v2', 'v1'] as RpcInterface[]) {
  const file = `schema/${openRpcFiles[version].pathname.split('/').pop()}`;
  const text = readFileSync(openRpcFiles[version], 'utf8');
  const document = JSON.parse(text) as Record<string, any>;
  const methods = document.methods as Record<string, any>[];
  const table = tables[version];
  const stale = `${file} is stale: run \`npm run openrpc:print\` and commit the result`;

  describe(`${file} (${version})`, () => {
    it('is fresh: what the method declarations build, with the recorded example results', () => {
      const rebuilt = buildOpenRpcDocument(table, version, { limits, results: recordedResults(document) });
      expect(document, stale).toEqual(rebuilt);
      expect(text, stale).toBe(`${JSON.stringify(rebuilt, null, 2)}\n`);
    });

    it('is a valid OpenRPC document under the 1.3 meta-schema, declared 1.2.6', () => {
      const { $schema: _ignored, ...metaSchema } = openRpcMetaSchema;
      const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
      // the meta-schema refers to JSON Schema itself by URL (meta.json-schema.tools): stand in for it offline
      // (the schemas in the document are compiled by Ajv as JSON Schema in the tests below)
      for (const $id of ['https://meta.json-schema.tools', 'https://meta.json-schema.tools/']) {
        ajv.addSchema({ $id, type: ['object', 'boolean'], definitions: { JSONSchemaObject: { properties: { $ref: { type: 'string' } } } } });
      }
      const validate = ajv.compile(metaSchema);
      expect(validate(document), JSON.stringify(validate.errors, null, 2)).toBe(true);
      // and the check is not vacuous
      expect(validate({ ...document, methods: [{ params: [] }] })).toBe(false);
      expect(validate({ ...document, methods: [{ ...methods[0], unknownMember: 1 }] })).toBe(false);
      // the version the generated client's pinned @open-rpc/meta-schema knows (test/clients/openrpc-generator.test.ts)
      expect(document.openrpc).toBe('1.2.6');
    });

    it('documents every identifier registered on its endpoint (aliases included; rpc.discover and dotted v1 names not) and nothing else', () => {
      const registered = new Set(table.flatMap((s) => s.names).filter(isListed));
      expect(registered.size).toBeGreaterThanOrEqual(10);
      expect(new Set(methods.map((m) => m.name))).toEqual(registered);
      expect(methods.length).toBe(registered.size); // no duplicates
      expect(document.servers.map((s: any) => new URL(s.url).pathname)).toEqual([rpcPaths[version]]);
      // the other interface's names are not here
      const other = new Set(tables[version === 'v2' ? 'v1' : 'v2'].flatMap((s) => s.names));
      expect(methods.filter((m) => other.has(m.name) || !isListed(m.name))).toEqual([]);
      // every dotted v1 name is listed under its identifier spelling, which names it
      const dotted = table.flatMap((s) => s.names).filter((name) => !isListed(name) && !name.startsWith('rpc.'));
      expect(dotted.length).toBe(version === 'v1' ? 10 : 0);
      for (const name of dotted) expect(methods.find((m) => m.name === name.replace('.', '_'))?.['x-alias-of'], name).toBe(name);
    });

    it('describes the params of each method as the table decodes them (names, positions, all layouts)', () => {
      for (const spec of table) {
        const longest = [...spec.layouts].sort((a, b) => b.length - a.length)[0]!;
        for (const name of spec.names.filter(isListed)) {
          const method = methods.find((m) => m.name === name)!;
          expect(method.paramStructure).toBe('by-position');
          expect(method.params.map((p: any) => [p.name, p['x-position']]), name).toEqual(longest.map((p, i) => [p.name, i]));
          if (spec.layouts.length > 1) expect(method['x-layouts']).toHaveLength(spec.layouts.length);
        }
      }
    });

    it('names aliases, v1 twins and error codes', () => {
      const byName = (name: string) => methods.find((m) => m.name === name)!;
      if (version === 'v2') {
        expect(byName('inds_getTicks')['x-aliases']).toEqual(['inds_getInscriptions']);
        expect(byName('inds_getInscriptions')['x-alias-of']).toBe('inds_getTicks');
        expect(byName('inds_getInscriptionTxOperate')['x-alias-of']).toBe('inds_getTickByCallData');
        expect(byName('inds_getTick').errors.map((e: any) => e.$ref)).toContain('#/components/errors/RecordNotFound');
        expect(byName('inds_getTicks').errors.map((e: any) => e.$ref)).not.toContain('#/components/errors/RecordNotFound');
      } else {
        expect(byName('address_Balance')['x-v2-twin']).toBe('inds_getAddressBalance');
        expect(byName('tick_Holders')['x-layouts']).toEqual([['limit', 'offset', 'address', 'chain', 'protocol', 'tick'], ['limit', 'offset', 'chain', 'protocol', 'tick']]);
      }
      expect(Object.values(document.components.errors).map((e: any) => e.code).sort())
        .toEqual([-32700, -32604, -32603, -32602, -32601, -32600, -32000].sort());
    });

    it('has at least one example for every method but the renamed aliases', () => {
      const without = methods.filter((m) => !m.examples?.length).map((m) => m.name);
      expect(without.sort()).toEqual(version === 'v2' ? ['inds_getAllChain', 'inds_getBalanceByAddress'] : []);
      for (const method of methods) for (const example of method.examples ?? []) expect(example.result, `${method.name} ${example.name}`).toBeDefined();
    });

    it('example params validate against the param schemas', () => {
      const compile = documentValidator(document);
      methods.forEach((method, m) => {
        for (const example of method.examples ?? []) {
          example.params.forEach((param: { name: string; value: unknown }) => {
            const p = method.params.findIndex((d: any) => d.name === param.name);
            const validate = compile(`/methods/${m}/params/${p}/schema`);
            expect(validate(param.value), `${method.name} ${example.name} ${param.name}: ${JSON.stringify(validate.errors)}`).toBe(true);
          });
        }
      });
    });
  });

  describe(`${file}: the examples on the demo dataset`, () => {
    const live = useGateway({ load: loadDemo });
    let runs: ExampleRun[];
    beforeAll(async () => {
      runs = await runExamples(live.base, document, version);
    });

    it('every example succeeds', () => {
      expect(runs.length).toBeGreaterThanOrEqual(version === 'v2' ? 20 : 10);
      for (const run of runs) expect(run.reply.error, `${run.method} ${run.example}: ${JSON.stringify(run.reply.error)}`).toBeUndefined();
    });

    it('with the recorded result', () => {
      const recorded = recordedResults(document);
      for (const run of runs) {
        expect(run.reply.result, `${run.method} ${run.example}: ${stale}`).toEqual(recorded.get(`${run.method} ${run.example}`));
      }
    });

    it('and the result validates against the result schema of its method', () => {
      const compile = documentValidator(document);
      for (const run of runs) {
        const m = methods.findIndex((method) => method.name === run.method);
        const validate = compile(`/methods/${m}/result/schema`);
        expect(validate(run.reply.result), `${run.method} ${run.example}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    });

    it('result schemas are strict: a member too many or too few fails them', () => {
      const compile = documentValidator(document);
      const m = methods.findIndex((method) => method.name === (version === 'v2' ? 'inds_getAddressBalance' : 'address_Balance'));
      const validate = compile(`/methods/${m}/result/schema`);
      const good = { tick: 't', balance: '5', transfer_type: 1, deploy_hash: 'h', available: '5' };
      expect(validate(good)).toBe(true);
      expect(validate({ ...good, extra: 1 })).toBe(false);
      expect(validate({ ...good, balance: '5.0' })).toBe(false); // the decimal rule: "5", never "5.0"
      const { available: _a, ...missing } = good;
      expect(validate(missing)).toBe(false);
    });

    it('rpc.discover answers with its own endpoint\'s document, at the address it was asked on', async () => {
      const paths = version === 'v2' ? ['/v2/rpc', '/v2/rpc/rpc.discover'] : ['/v1/rpc', '/v1/'];
      for (const path of paths) {
        const reply = await call(live.base, 'rpc.discover', [], path);
        expect(reply.error).toBeUndefined();
        expect({ ...reply.result, servers: document.servers }, path).toEqual(document);
        expect(reply.result.servers, path).toEqual([{ ...document.servers[0], url: `${live.base}${rpcPaths[version]}` }]);
      }
      expect((await call(live.base, 'rpc.discover', [1], rpcPaths[version])).error.code).toBe(-32602);
      expect((await call(live.base, 'rpc.other', [], rpcPaths[version])).error.code).toBe(-32601);
    });
  });
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { MethodSpec, ParamSpec } from '../../src/rpc/declaration.js';
import { isListed, openRpcFiles, rpcPaths, type RpcInterface } from '../../src/rpc/openrpc.js';
import { createRpcTables } from '../../src/rpc/tables.js';
import { loadDemo, useGateway } from '../support/gateway.js';
import { call } from '../support/http.js';

// One declaration per method (src/rpc/methods/<group>.ts) is what the decoder enforces and what the
// OpenRPC documents say: this walks every method of both interfaces, every layout and every param, and
// checks that they cannot disagree. A required param left out, null or empty is -32602 naming it (its
// 1-based position and name) on the wire; a param not declared required is never refused for being
// empty; each document lists the params of the method's longest layout with the declared names,
// positions and required flags, and no required param follows an optional one (OpenRPC's rule).

const tables = createRpcTables();
const versions: RpcInterface[] = ['v2', 'v1'];
const documents = Object.fromEntries(versions.map((v) => [v, JSON.parse(readFileSync(openRpcFiles[v], 'utf8'))])) as Record<RpcInterface, any>;

/** Example params of a method (any of its names), for valid values of its params by name. */
function exampleValues(spec: MethodSpec): Map<string, unknown> {
  const values = new Map<string, unknown>();
  const examples = [...(spec.doc.examples ?? []), ...Object.values(spec.aliases ?? {}).flatMap((a) => a.examples ?? [])];
  for (const layout of spec.layouts) {
    for (const example of examples) {
      if (example.params.length !== layout.length) continue;
      layout.forEach((p, i) => values.has(p.name) || values.set(p.name, example.params[i]));
    }
  }
  return values;
}

const fallback = (p: ParamSpec): unknown =>
  ({ limit: 2, offset: 0, int: 0, direction: 2, string: 'x', strings: [], selectors: [] })[p.type];

/** Params that decode: the examples' values, else a well-typed one (required strings non-empty). */
function validParams(spec: MethodSpec, layout: readonly ParamSpec[]): unknown[] {
  const values = exampleValues(spec);
  return layout.map((p) => (values.has(p.name) ? values.get(p.name) : fallback(p)));
}

interface Case { version: RpcInterface; name: string; spec: MethodSpec; layout: readonly ParamSpec[] }
const cases: Case[] = versions.flatMap((version) =>
  tables[version].flatMap((spec) => spec.names.flatMap((name) => spec.layouts.map((layout) => ({ version, name, spec, layout })))));

describe('the declarations', () => {
  it('declare required only string params, and every required param has an example value', () => {
    for (const { name, spec, layout } of cases) {
      for (const p of layout.filter((q) => q.required)) {
        expect(p.type, `${name} ${p.name}`).toBe('string');
        expect(exampleValues(spec).get(p.name), `${name} ${p.name}: no example gives it`).toEqual(expect.any(String));
      }
    }
    // the decision for the address methods (docs/json-rpc.md, "JSON-RPC v2")
    const required = (name: string) => tables.v2.find((s) => s.names.includes(name))!.layouts.flatMap((l) => l.filter((p) => p.required).map((p) => p.name));
    expect(required('inds_getTransactionByAddress')).toEqual(['address', 'address']);
    expect(required('inds_getBalancesByAddress')).toEqual(['address']);
  });
});

describe('the OpenRPC documents say what the declarations say', () => {
  for (const version of versions) {
    it(`${version}: every method's params are its longest layout, with the declared required flags`, () => {
      const methods = documents[version].methods as any[];
      for (const spec of tables[version]) {
        const longest = [...spec.layouts].sort((a, b) => b.length - a.length)[0]!;
        const lastRequired = longest.reduce((last, p, i) => (p.required ? i : last), -1);
        // rpc.discover and the dotted v1 names are answered, not listed (test/rpc/discover.test.ts)
        for (const name of spec.names.filter(isListed)) {
          const method = methods.find((m) => m.name === name);
          expect(method, name).toBeDefined();
          expect(method.params.map((p: any) => p.name), name).toEqual(longest.map((p) => p.name));
          method.params.forEach((p: any, i: number) => {
            const declared = longest[i]!;
            expect(p['x-position'], `${name} ${p.name}`).toBe(i);
            // before a required param: documented required, null standing for the default
            expect(p.required, `${name} ${p.name}`).toBe(declared.required === true || i < lastRequired);
            if (declared.required) expect(p.schema.minLength, `${name} ${p.name}`).toBe(1);
            else if (i < lastRequired) expect(p.schema.oneOf?.[1], `${name} ${p.name}`).toEqual({ type: 'null' });
          });
        }
      }
    });

    it(`${version}: no required param follows an optional one`, () => {
      for (const method of documents[version].methods as any[]) {
        const flags = method.params.map((p: any) => p.required === true);
        expect(flags.indexOf(false) === -1 || !flags.slice(flags.indexOf(false)).includes(true), method.name).toBe(true);
      }
    });
  }
});

describe('the decoder enforces the declarations on the wire', () => {
  const live = useGateway({ load: loadDemo });

  const invalid = (position: number, name: string) => ({
    code: -32602,
    message: `Invalid params: parameter #${position} '${name}' must not be empty`,
    data: { reason: `parameter #${position} '${name}' must not be empty`, param: name, position },
  });

  it('a required param empty, null or left out is -32602 naming it; the same call with it given is not', async () => {
    let checked = 0;
    for (const { version, name, spec, layout } of cases) {
      const path = rpcPaths[version];
      const params = validParams(spec, layout);
      const ok = await call(live.base, name, params, path);
      // with every required param given, no param is refused for being empty
      expect(ok.error?.message ?? '', `${name} ${JSON.stringify(params)}`).not.toMatch(/must not be empty/);
      for (const [i, p] of layout.entries()) {
        if (!p.required) continue;
        const emptied = params.map((v, j) => (j === i ? '' : v));
        const nulled = params.map((v, j) => (j === i ? null : v));
        // left out: cut before it (only when it is the last param, or the layout has no shorter twin)
        const cut = params.slice(0, i);
        for (const sent of [emptied, nulled, cut]) {
          if (sent === cut && spec.layouts.some((l) => l !== layout && l.length === cut.length)) continue;
          expect((await call(live.base, name, sent, path)).error, `${name} ${JSON.stringify(sent)}`).toEqual(invalid(i + 1, p.name));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThanOrEqual(40);
  });

  it('a param not declared required is never refused for being empty', async () => {
    let checked = 0;
    for (const { version, name, spec, layout } of cases) {
      const params = validParams(spec, layout);
      for (const [i, p] of layout.entries()) {
        if (p.required || p.type !== 'string') continue;
        const sent = params.map((v, j) => (j === i ? '' : v));
        const reply = await call(live.base, name, sent, rpcPaths[version]);
        expect(reply.error?.data?.param, `${name} ${JSON.stringify(sent)}`).not.toBe(p.name);
        expect(reply.error?.message ?? '', `${name} ${JSON.stringify(sent)}`).not.toMatch(/must not be empty/);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(60);
  });
});

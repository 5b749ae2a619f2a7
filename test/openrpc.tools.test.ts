import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as generatorModule from '@open-rpc/generator';
import { parseOpenRPCDocument, validateOpenRPCDocument } from '@open-rpc/schema-utils-js';
import { afterAll, describe, expect, it } from 'vitest';
import { openRpcFiles, type RpcInterface } from '../src/rpc/openrpc.js';

// The OpenRPC documents as the official OpenRPC tooling sees them, offline: @open-rpc/schema-utils-js
// validates each against the meta-schema and dereferences it (every $ref is local), and
// @open-rpc/generator generates a TypeScript client from each, which must type-check (strict, with the
// packages it imports: @open-rpc/client-js, lodash, @open-rpc/meta-schema, @open-rpc/schema-utils-js).

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const versions: RpcInterface[] = ['v2', 'v1'];
const read = (version: RpcInterface) => JSON.parse(readFileSync(openRpcFiles[version], 'utf8')) as Record<string, any>;
// a CommonJS module whose `exports.default` is the generate function: depending on the loader's interop
// the namespace's default is that function or the whole `exports`
type Generate = (options: unknown) => Promise<void>;
const loaded = (generatorModule as unknown as { default: Generate | { default: Generate } }).default;
const generate: Generate = typeof loaded === 'function' ? loaded : loaded.default;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Every $ref in a JSON value. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, found));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refs(v, found);
    }
  }
  return found;
}

describe.each(versions)('the %s document and the OpenRPC tools', (version) => {
  const document = read(version);

  it('validateOpenRPCDocument accepts it (and rejects a server URL that is no URI)', () => {
    expect(validateOpenRPCDocument(document as never)).toBe(true);
    const templated = { ...document, servers: [{ name: version, url: `{baseUrl}/${version}/rpc` }] };
    expect(validateOpenRPCDocument(templated as never)).not.toBe(true);
  });

  it('has only local $refs, and parseOpenRPCDocument dereferences it offline', async () => {
    const all = refs(document);
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter((r) => !r.startsWith('#/components/'))).toEqual([]);
    const parsed = await parseOpenRPCDocument(structuredClone(document) as never);
    expect(refs(parsed)).toEqual([]);
    const discover = parsed.methods.find((m) => 'name' in m && m.name === 'rpc.discover') as { result: { schema: { required: string[] } } };
    expect(discover.result.schema.required).toEqual(['openrpc', 'info', 'methods']);
  });

  it('@open-rpc/generator writes a TypeScript client that type-checks', async () => {
    const dir = mkdtempSync(join(tmpdir(), `openrpc-client-${version}-`));
    dirs.push(dir);
    await generate({ openrpcDocument: structuredClone(document), outDir: dir, components: [{ type: 'client', language: 'typescript', name: `gateway-${version}` }] });
    const client = join(dir, 'client', 'typescript');
    const source = join(client, 'src', 'index.ts');
    const generated = readFileSync(source, 'utf8');
    // The generator's template writes each method name as a bare class member (`public tick.Holders: …`),
    // which no dotted JSON-RPC name survives: every v1 name and rpc.discover. Quote exactly those members
    // (`public "tick.Holders": …`, the same member); nothing else of the generated file is touched.
    const dotted = /^(\s*public )([A-Za-z_$][\w$]*(?:\.[\w$]+)+)(: )/gm;
    const fixed = generated.replace(dotted, '$1"$2"$3');
    expect(fixed.match(/^\s*public "[^"]+":/gm)?.length).toBe(document.methods.filter((m: any) => m.name.includes('.')).length);
    writeFileSync(source, fixed);
    // every method is a member with a typed signature; positional params before a required one take null
    for (const method of document.methods) expect(fixed).toContain(method.name.includes('.') ? `public "${method.name}": ` : `public ${method.name}: `);
    const byAddress = version === 'v2' ? 'IndsGetBalancesByAddress' : 'AddressBalances';
    expect(fixed).toMatch(new RegExp(`export type ${byAddress} = \\(limit: \\w+, offset: \\w+, address: \\w+, chain\\?: `));
    // the packages it imports, from this project's node_modules (offline)
    symlinkSync(join(root, 'node_modules'), join(client, 'node_modules'), 'dir');
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const result = await run(process.execPath, [tsc, '-p', join(client, 'tsconfig.json'), '--noEmit'], { cwd: client }).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
    // and the check is not vacuous: the unquoted output does not compile
    if (version === 'v1') {
      writeFileSync(source, generated);
      const broken = await run(process.execPath, [tsc, '-p', join(client, 'tsconfig.json'), '--noEmit'], { cwd: client }).then(() => 0, (e: { code: number }) => e.code);
      expect(broken).not.toBe(0);
    }
  }, 120_000);
});

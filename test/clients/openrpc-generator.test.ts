import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as generatorModule from '@open-rpc/generator';
import { parseOpenRPCDocument, validateOpenRPCDocument } from '@open-rpc/schema-utils-js';
import { afterAll, describe, expect, it } from 'vitest';
import { openRpcFiles, type RpcInterface } from '../../src/rpc/openrpc.js';

// The OpenRPC documents as the official OpenRPC tooling sees them, offline: @open-rpc/schema-utils-js
// validates each against the meta-schema and dereferences it (every $ref is local), and
// @open-rpc/generator, run with the shipped config (examples/openrpc-client/<version>.json), generates a
// TypeScript client from each that compiles with no edit (strict, with the packages it imports:
// @open-rpc/client-js, lodash, @open-rpc/meta-schema, @open-rpc/schema-utils-js). Both configs use the
// generator's stock client: the v1 document lists each dotted name under its identifier spelling.

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
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
    // rpc.discover is answered on the endpoint, not listed (test/rpc/discover.test.ts)
    expect(parsed.methods.filter((m) => 'name' in m && m.name.startsWith('rpc.'))).toEqual([]);
  });

  it('@open-rpc/generator, with the shipped config, writes a TypeScript client that compiles with no edit', async () => {
    const { client, source } = await generateClient(version, shippedConfig(version).components[0]!);
    const generated = readFileSync(source, 'utf8');
    // every method is a member with a typed signature that calls it by its own name; positional params
    // before a required one take null
    for (const method of document.methods) {
      expect(generated).toContain(`public ${method.name}: `);
      expect(generated).toContain(`return this.request("${method.name}", params);`);
    }
    const byAddress = version === 'v2' ? 'IndsGetBalancesByAddress' : 'AddressBalances';
    expect(generated).toMatch(new RegExp(`export type ${byAddress} = \\(limit: \\w+, offset: \\w+, address: \\w+, chain\\?: `));
    expect(await typeCheck(client)).toEqual({ code: 0, output: '' });
  }, 120_000);

  it('declares the OpenRPC version the generated package\'s own pinned @open-rpc/meta-schema types (1.2.6)', async () => {
    // the package.json the generator writes pins @open-rpc/meta-schema 1.14.2, whose Openrpc type ends at
    // "1.2.6": a document declaring 1.3.x makes `openrpcDocument: OpenRPC` fail tsc once that package is installed
    const { client } = await generateClient(version, shippedConfig(version).components[0]!);
    const pinned = JSON.parse(readFileSync(join(client, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pinned.dependencies['@open-rpc/meta-schema']).toBe('1.14.2');
    expect(document.openrpc).toBe('1.2.6');
  }, 120_000);

  it('the shipped config is the generator\'s stock client component, given the checked-in document', () => {
    const config = shippedConfig(version);
    expect(config.components).toHaveLength(1);
    expect(config.components[0]).toEqual({
      type: 'client', name: `inscription-gateway-${version}`, language: 'typescript', outPath: `./examples/openrpc-client/generated/${version}`,
    });
    expect(join(root, config.openrpcDocument)).toBe(fileURLToPath(openRpcFiles[version]));
  });

  it('is not vacuous: a dotted method name makes the stock client fail to compile', async () => {
    const dotted = structuredClone(document);
    dotted.methods[0].name = dotted.methods[0]['x-alias-of'] ?? 'inds.getTicks';
    const { client, source } = await generateClient(version, shippedConfig(version).components[0]!, dotted);
    expect(readFileSync(source, 'utf8')).toContain(`public ${dotted.methods[0].name}: `);
    expect((await typeCheck(client)).code).not.toBe(0);
  }, 120_000);
});

interface ComponentConfig { type: string; name: string; language: string; outPath?: string }

/** examples/openrpc-client/<version>.json: what `open-rpc-generator generate -c` is given. */
function shippedConfig(version: RpcInterface): { openrpcDocument: string; components: ComponentConfig[] } {
  return JSON.parse(readFileSync(join(root, 'examples', 'openrpc-client', `${version}.json`), 'utf8'));
}

/** Runs the generator for one component (on the checked-in document, or `document`) into a fresh directory; the client's directory and its source file. */
async function generateClient(version: RpcInterface, component: ComponentConfig, document = read(version)) {
  const dir = mkdtempSync(join(tmpdir(), `openrpc-client-${version}-`));
  dirs.push(dir);
  await generate({ openrpcDocument: structuredClone(document), components: [{ ...component, outPath: dir }] });
  // the packages it imports (@open-rpc/client-js, lodash, @open-rpc/meta-schema, …), from this project (offline)
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return { client: dir, source: join(dir, 'src', 'index.ts') };
}

/** tsc on a generated client with its own tsconfig (strict): exit code and output. */
function typeCheck(client: string): Promise<{ code: number; output: string }> {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  return run(process.execPath, [tsc, '-p', join(client, 'tsconfig.json'), '--noEmit'], { cwd: client }).then(
    () => ({ code: 0, output: '' }),
    (error: { code: number; stdout: string }) => ({ code: error.code, output: error.stdout }),
  );
}

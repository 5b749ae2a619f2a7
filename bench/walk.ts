// npm run bench:walk -- [method] [params-json]
//
// Counts the src/ files whose code runs while the gateway answers one JSON-RPC call on /v2/rpc, from the
// socket to SQL and back, and how many times each file's functions were entered. V8 precise coverage is
// reset after three warm-up calls (so lazy set-up is not counted), then the call is made once and every
// src/ file with a function that ran is listed. The in-process embedded database (src/db/embedded*) and
// the result cache (off) are left out. The data-version watcher's poll timer is set to a minute so that it
// does not fire in that window and add its files (src/db/version.ts, deadline.ts) to the call's. Then a CPU
// profile of 300 more calls lists every call a src/ layer makes back up into a higher one (a layer entered
// twice), in the layer order of .dependency-cruiser.cjs.
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { createGateway } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { startEmbedded } from '../src/db/embedded.js';
import { prepareDatabase } from '../src/db/prepare.js';

const method = process.argv[2] ?? 'inds_getHoldersByTick';
const params = JSON.parse(process.argv[3] ?? '[3, 0, "avalanche", "asc-20", "tomray", 2]');
const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
const config = loadConfig({ LOG_LEVEL: 'silent', CACHE: 'false', DATA_VERSION_POLL_MS: '60000' } as never);
const embedded = await startEmbedded({ maxConnections: config.DB_POOL_MAX + 2 });
const target = { socketPath: embedded.socketPath };
await prepareDatabase(target, config, 'always');
const gateway = createGateway(config, target);
await new Promise<void>((resolve) => gateway.server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(gateway.server.address() as AddressInfo).port}`;
const once = async (id: number) => {
  const r = await fetch(`${base}/v2/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params }) });
  return r.text();
};
for (let i = 0; i < 3; i++) await once(i);
await session.post('Profiler.takePreciseCoverage'); // resets the counters
const reply = await once(99);
const { result } = await session.post('Profiler.takePreciseCoverage');
// per file: how many times its functions were entered (the count of each function's own range)
const entries = new Map<string, number>();
for (const script of result) {
  if (!script.url.includes('/src/') || script.url.includes('node_modules') || script.url.includes('/src/db/embedded')) continue;
  const calls = script.functions.reduce((sum, f) => sum + (f.ranges[0]?.count ?? 0), 0);
  if (script.functions.some((f) => f.ranges.some((r) => r.count > 0))) entries.set(script.url.replace(/^.*\/src\//, 'src/'), calls);
}
const files = [...entries.keys()].sort();
// A layer entered twice is one that a lower layer calls back into (the layers below may only be called
// down into: .dependency-cruiser.cjs). V8's CPU profile of many more calls shows the stacks: each src/
// frame whose nearest src/ caller (library frames between them skipped) is in a lower layer is such a call.
const layerOrder = [...readFileSync(new URL('../.dependency-cruiser.cjs', import.meta.url), 'utf8')
  .matchAll(/\['([a-z]+)', '\^src\/([a-z]+)/g)].map((m) => m[2]!.replace(/\\/g, ''));
const rankOf = (file: string) => layerOrder.indexOf(/^src\/([a-z]+)/.exec(file)?.[1] ?? '');
const sampledCalls = 300;
await session.post('Profiler.setSamplingInterval', { interval: 20 });
await session.post('Profiler.start');
for (let i = 0; i < sampledCalls; i++) await once(100 + i);
const { profile } = await session.post('Profiler.stop');
const srcFile = (url: string) => (url.includes('/src/') && !url.includes('node_modules') ? url.replace(/^.*\/src\//, 'src/') : null);
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const upward = new Map<string, number>();
for (const node of profile.nodes) {
  const file = srcFile(node.callFrame.url);
  if (!file) continue;
  let up = parentOf.get(node.id);
  while (up !== undefined && !srcFile(byId.get(up)!.callFrame.url)) up = parentOf.get(up);
  if (up === undefined) continue;
  const caller = byId.get(up)!;
  const from = srcFile(caller.callFrame.url)!;
  if (rankOf(from) < 0 || rankOf(file) <= rankOf(from)) continue;
  const edge = `${from} ${caller.callFrame.functionName || '(anonymous)'} → ${file} ${node.callFrame.functionName || '(anonymous)'}`;
  upward.set(edge, (upward.get(edge) ?? 0) + (node.hitCount ?? 0) + 1);
}
// the layer of a file: its folder under src/ (app.ts and main.ts on their own)
const layerOf = (file: string) => /^src\/([^/]+)\//.exec(file)?.[1] ?? file.replace(/^src\//, '');
const layers = new Map<string, number>();
for (const file of files) layers.set(layerOf(file), (layers.get(layerOf(file)) ?? 0) + 1);
console.log(reply.slice(0, 120));
console.log(`${files.length} files:\n${files.map((f) => `${f} (${entries.get(f)} function entries)`).join('\n')}`);
console.log(`layers: ${[...layers].map(([l, n]) => `${l} ${n}`).join(', ')}`);
console.log(`calls back up a layer (sampled over ${sampledCalls} more calls): ${upward.size === 0 ? 'none' : ''}`);
for (const [edge, n] of [...upward].sort((a, b) => b[1] - a[1])) console.log(`  ${edge} (${n} samples)`);
await gateway.close();
await embedded.stop();
process.exit(0);

// npx tsx bench/prof-summary.ts FILE.cpuprofile [--top 40] [--focus substring]
//
// Aggregates a V8 .cpuprofile (node --cpu-prof, `npm run bench -- --cpu-prof`): self time by function, by file
// and by package (node_modules/<pkg>, src/<dir>, node: internals, GC, idle), and inclusive time of the
// functions whose name or file contains --focus. Percentages are of the non-idle time.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
const { values, positionals } = parseArgs({
  options: {
    top: { type: 'string', default: '40' },
    focus: { type: 'string', multiple: true },
    // only the samples from this second of the profile on / up to this second (default: the busiest stretch)
    from: { type: 'string' },
    to: { type: 'string' },
    timeline: { type: 'boolean', default: false },
    // self time of the functions matching this, by their callers' stacks (5 frames up)
    callers: { type: 'string', multiple: true },
  },
  allowPositionals: true,
});
const top = Number(values.top);
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
};
const byId = new Map<number, Node>();
for (const n of profile.nodes) byId.set(n.id, n);
const idleIds = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
// per-second busy time, to find the load window (startup and idle gaps left out)
const t = new Array<number>(profile.samples.length);
const busyPerS: number[] = [];
{
  let now = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    now += profile.timeDeltas[i] ?? 0;
    t[i] = now / 1e6;
    const sec = Math.floor(t[i]!);
    busyPerS[sec] ??= 0;
    if (!idleIds.has(profile.samples[i]!)) busyPerS[sec]! += (profile.timeDeltas[i + 1] ?? 0) / 1e6;
  }
}
if (values.timeline) console.log(busyPerS.map((b, i) => `${i}s ${(b ?? 0).toFixed(2)}`).join('  '));
// default window: the longest run of seconds at >= 50 % of the busiest second, minus its first second
let from = values.from === undefined ? 0 : Number(values.from);
let to = values.to === undefined ? Number.POSITIVE_INFINITY : Number(values.to);
if (values.from === undefined && values.to === undefined) {
  const peak = Math.max(...busyPerS.map((b) => b ?? 0));
  let best = [0, 0];
  for (let i = 0; i < busyPerS.length; ) {
    if ((busyPerS[i] ?? 0) < peak / 2) { i++; continue; }
    let j = i;
    while (j < busyPerS.length && (busyPerS[j] ?? 0) >= peak / 2) j++;
    if (j - i > best[1]! - best[0]!) best = [i, j];
    i = j;
  }
  from = best[0]! + 1;
  to = best[1]!;
}
const selfUs = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) {
  if (t[i]! < from || t[i]! >= to) continue;
  const id = profile.samples[i]!;
  const dt = profile.timeDeltas[i + 1] ?? 0;
  selfUs.set(id, (selfUs.get(id) ?? 0) + dt);
}
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

function pkgOf(url: string, fn: string): string {
  if (!url) {
    if (fn === '(garbage collector)') return '(gc)';
    if (fn === '(idle)') return '(idle)';
    if (fn === '(program)') return '(program)';
    return `(native ${fn})`;
  }
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (url.startsWith('node:')) return url.split('/').slice(0, 2).join('/');
  const m = /\/(src|dist)\/(.*)$/.exec(url);
  if (m) {
    const parts = m[2]!.split('/');
    return `src/${parts.length > 1 ? parts[0] : parts[0]}`;
  }
  return url;
}
function fileOf(url: string): string {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  const m = /\/(src|dist)\/(.*)$/.exec(url);
  return m ? `src/${m[2]}` : url || '(none)';
}
const total = [...selfUs.entries()].reduce((s, [id, us]) => {
  const n = byId.get(id)!;
  return n.callFrame.functionName === '(idle)' ? s : s + us;
}, 0);
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
const fns = new Map<string, number>();
const files = new Map<string, number>();
const pkgs = new Map<string, number>();
for (const [id, us] of selfUs) {
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  if (functionName === '(idle)') continue;
  add(fns, `${functionName || '(anon)'} ${fileOf(url)}:${lineNumber + 1}`, us);
  add(files, fileOf(url), us);
  add(pkgs, pkgOf(url, functionName), us);
}
const show = (title: string, m: Map<string, number>, n: number) => {
  console.log(`\n## ${title}`);
  for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)} %  ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`);
};
const durS = (profile.endTime - profile.startTime) / 1e6;
console.log(`profile ${durS.toFixed(1)} s; window ${from}-${Math.min(to, durS).toFixed(0)} s, busy ${(total / 1e6).toFixed(2)} s`);
show('self time by package', pkgs, top);
// the same, in the slices the issue talks about
{
  const slice = (pkg: string): string => {
    if (pkg === '(gc)') return 'garbage collection';
    if (/^\(native (writev|writeBuffer|read|utf8Slice)/.test(pkg) || /^node:(net|internal\/stream|internal\/streams)/.test(pkg)) return 'socket I/O and streams';
    if (/^node:(_http|internal\/http|events|buffer|internal\/buffer|internal\/encoding|internal\/errors|internal\/url)/.test(pkg)) return 'node:http, events, buffers';
    // graphql-jit's generated code (new Function: no url)
    if (/^\(native .*(ResolverHandler|__context|__value)/.test(pkg)) return 'GraphQL execution (graphql-jit, Pothos, resolvers, scalars)';
    if (pkg === 'postgres') return 'postgres.js';
    if (/^(graphql-yoga|@whatwg-node|@envelop\/core|@graphql-yoga\/(?!plugin-prometheus)|@graphql-tools)/.test(pkg)) return 'yoga, envelop, fetch adapter';
    if (/^(graphql|graphql-jit|@pothos)/.test(pkg) || pkg === 'src/graphql') return 'GraphQL execution (graphql-jit, Pothos, resolvers, scalars)';
    if (/^(prom-client|@envelop\/prometheus|@graphql-yoga\/plugin-prometheus|pino)/.test(pkg) || pkg === 'src/observability') return 'observability (metrics, logs, request scope)';
    if (/^node:(internal\/)?async_hooks/.test(pkg)) return 'AsyncLocalStorage / async_hooks';
    if (/^(jayson|lossless-json)$/.test(pkg) || pkg === 'src/rpc') return 'JSON-RPC (jayson, envelope, params, reshape)';
    if (/^(compression|on-headers|vary|negotiator|compressible)$/.test(pkg)) return 'compression middleware';
    if (/^(src\/db|src\/loaders|dataloader)$/.test(pkg)) return 'store, runner, loaders';
    if (/^node:(internal\/)?(timers|process)|^\(native runMicrotasks|^\(program\)/.test(pkg)) return 'timers, microtasks, V8 (program)';
    if (pkg.startsWith('src/')) return 'gateway, other';
    return `other: ${pkg}`;
  };
  const slices = new Map<string, number>();
  for (const [pkg, us] of pkgs) add(slices, slice(pkg), us);
  show('self time by slice', slices, 14);
}
show('self time by file', files, top);
show('self time by function', fns, top);
// inclusive time by file and by package (a sample counts once per file/package on its stack)
{
  const inclFiles = new Map<string, number>();
  const inclPkgs = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seenF = new Set<string>();
    const seenP = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url } = byId.get(cur)!.callFrame;
      if (!url) continue;
      const f = fileOf(url);
      const pk = pkgOf(url, functionName);
      if (!seenF.has(f)) { seenF.add(f); add(inclFiles, f, us); }
      if (!seenP.has(pk)) { seenP.add(pk); add(inclPkgs, pk, us); }
    }
  }
  show('inclusive time by package', inclPkgs, top);
  show('inclusive time by file', inclFiles, top);
}
// inclusive time of focus functions (counted once per sample even under recursion)
for (const focus of values.focus ?? []) {
  const incl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const { functionName, url, lineNumber } = byId.get(cur)!.callFrame;
      const key = `${functionName || '(anon)'} ${fileOf(url)}:${lineNumber + 1}`;
      if (!key.includes(focus) || seen.has(key)) continue;
      seen.add(key);
      add(incl, key, us);
    }
  }
  show(`inclusive time: ${focus}`, incl, top);
}

for (const leaf of values.callers ?? []) {
  const stacks = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const { functionName } = byId.get(id)!.callFrame;
    if (!functionName.includes(leaf)) continue;
    const frames: string[] = [];
    for (let cur = parent.get(id); cur !== undefined && frames.length < 6; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      frames.push(`${f.functionName || '(anon)'}@${fileOf(f.url).split('/').slice(-2).join('/')}:${f.lineNumber + 1}`);
    }
    add(stacks, frames.join(' < '), us);
  }
  show(`callers of ${leaf}`, stacks, 12);
}

import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { chownSync, cpSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { DockerfileParser, type Copy, type Env, type Label, type Run } from 'dockerfile-ast';

// A Dockerfile replayed without Docker: parsed (dockerfile-ast), then each stage built in a directory of
// its own that stands for the image's root file system — exactly its COPYs (from the build context,
// filtered by .dockerignore, or from an earlier stage) and its RUNs (`/bin/sh -c`, in the stage's
// WORKDIR, with its ENV and ARGs) — with independent stages built side by side, as BuildKit does. What
// the base image brings is the host's: node and npm on PATH (the caller checks the versions), the users
// root (0) and node (1000). A `RUN --mount=type=cache` target is the host directory the caller names
// (a cache mount is shared between builds). RUN commands must use paths relative to WORKDIR (the replay
// maps the container's absolute paths only where it performs the instruction itself).

export type Step =
  | { op: 'ARG'; name: string; value?: string }
  | { op: 'ENV'; vars: [string, string][] }
  | { op: 'LABEL'; labels: [string, string][] }
  | { op: 'WORKDIR'; path: string }
  | { op: 'COPY'; from?: string; sources: string[]; dest: string }
  | { op: 'RUN'; command: string; caches: string[] }
  | { op: 'USER'; user: string }
  | { op: 'EXPOSE'; ports: string[] }
  | { op: 'CMD'; argv: string[] }
  | { op: 'HEALTHCHECK'; argv: string[] };

export interface Stage { name: string; base: string; steps: Step[] }
export interface ParsedDockerfile { args: Map<string, string>; stages: Stage[] }

/** The build's instructions per stage; the ARGs before the first FROM are the global ones. */
export function parseDockerfile(text: string): ParsedDockerfile {
  const file = DockerfileParser.parse(text);
  const args = new Map(file.getInitialARGs().map((a) => [a.getProperty()!.getName(), a.getProperty()!.getValue() ?? '']));
  const stages: Stage[] = [];
  for (const i of file.getInstructions()) {
    const keyword = i.getKeyword();
    if (keyword === 'FROM') {
      const words = i.getArguments().map((a) => a.getValue());
      stages.push({ name: words[2] ?? String(stages.length), base: expand(words[0]!, args), steps: [] });
      continue;
    }
    if (stages.length === 0) continue; // the global ARGs, read above
    const step = parseStep(keyword, i);
    if (step) stages.at(-1)!.steps.push(step);
  }
  return { args, stages };
}

type Instruction = ReturnType<ReturnType<typeof DockerfileParser.parse>['getInstructions']>[number];

function parseStep(keyword: string, i: Instruction): Step | null {
  const words = i.getArguments().map((a) => a.getValue());
  const content = i.getArgumentsContent() ?? '';
  switch (keyword) {
    case 'ARG': {
      const [name, value] = content.split(/=(.*)/s);
      return { op: 'ARG', name: name!.trim(), value };
    }
    case 'ENV':
      return { op: 'ENV', vars: (i as Env).getProperties().map((p) => [p.getName(), p.getValue() ?? '']) };
    case 'LABEL':
      return { op: 'LABEL', labels: (i as Label).getProperties().map((p) => [p.getName(), p.getValue() ?? '']) };
    case 'WORKDIR':
      return { op: 'WORKDIR', path: words[0]! };
    case 'COPY': {
      const from = (i as Copy).getFromFlag()?.getValue() ?? undefined;
      return { op: 'COPY', from, sources: words.slice(0, -1), dest: words.at(-1)! };
    }
    case 'RUN': {
      const caches = (i as Run).getFlags().filter((f) => f.getName() === 'mount')
        .map((f) => Object.fromEntries((f.getValue() ?? '').split(',').map((kv) => kv.split('=') as [string, string])))
        .filter((m) => m.type === 'cache').map((m) => m.target as string);
      return { op: 'RUN', command: content.trim(), caches };
    }
    case 'USER':
      return { op: 'USER', user: words[0]! };
    case 'EXPOSE':
      return { op: 'EXPOSE', ports: words };
    case 'CMD':
      return { op: 'CMD', argv: JSON.parse(content) as string[] };
    case 'HEALTHCHECK':
      return { op: 'HEALTHCHECK', argv: JSON.parse(content.slice(content.indexOf('['))) as string[] };
    default:
      throw new Error(`the replay does not know the instruction ${keyword}`);
  }
}

/** `$NAME`, `${NAME}` and `${NAME:-default}` as the Dockerfile expands them. */
export function expand(text: string, vars: Map<string, string>): string {
  return text.replace(/\$\{(\w+)(?::-([^}]*))?\}|\$(\w+)/g, (_m, braced: string | undefined, fallback: string | undefined, bare: string | undefined) => {
    const value = vars.get((braced ?? bare)!);
    return value === undefined || (value === '' && fallback !== undefined) ? (fallback ?? '') : value;
  });
}

// ------------------------------------------------------------------------------------------------ replay

export interface ReplayOptions {
  /** The build context (the repository). */
  context: string;
  /** An empty directory: each stage's root file system is built under it. */
  dir: string;
  buildArgs?: Record<string, string>;
  /** Host directory per cache mount target. */
  caches: Record<string, string>;
  /** The base images' environment (PATH with node and npm) and the builder's settings (npm's registry). */
  baseEnv: Record<string, string>;
}

export interface BuiltStage {
  name: string;
  /** The stage's root file system. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  labels: Record<string, string>;
  user: { uid: number; gid: number };
  cmd: string[];
  healthcheck: string[];
  expose: string[];
  /** Everything its RUNs printed. */
  output: string;
}

const baseUsers: Record<string, number> = { root: 0, node: 1000 };
// a CommonJS module whose typings declare a default export
const ignore = createRequire(import.meta.url)('@balena/dockerignore') as typeof import('@balena/dockerignore').default;

/** The Dockerfile built into `dir`: every stage, dependencies first (independent ones concurrently). */
export async function replayDockerfile(file: ParsedDockerfile, options: ReplayOptions): Promise<Map<string, BuiltStage>> {
  const built = new Map<string, Promise<BuiltStage>>();
  const ignored = contextFilter(options.context);
  for (const stage of file.stages) {
    const needs = stage.steps.flatMap((s) => (s.op === 'COPY' && s.from ? [s.from] : []));
    const after = Promise.all(needs.map((n) => {
      const dep = built.get(n);
      if (!dep) throw new Error(`stage ${stage.name}: COPY --from=${n} names no earlier stage`);
      return dep;
    }));
    built.set(stage.name, after.then((deps) => buildStage(stage, file, options, ignored, new Map(deps.map((d) => [d.name, d])))));
  }
  const stages = await Promise.all(built.values());
  return new Map(stages.map((s) => [s.name, s]));
}

async function buildStage(stage: Stage, file: ParsedDockerfile, options: ReplayOptions, ignored: (path: string) => boolean,
  deps: Map<string, BuiltStage>): Promise<BuiltStage> {
  const root = join(options.dir, stage.name);
  mkdirSync(join(root, 'root'), { recursive: true });
  mkdirSync(join(root, 'home/node'), { recursive: true });
  chownSync(join(root, 'home/node'), 1000, 1000);
  const out: BuiltStage = { name: stage.name, root, workdir: '/', env: {}, labels: {}, user: { uid: 0, gid: 0 }, cmd: [], healthcheck: [], expose: [], output: '' };
  const args = new Map<string, string>();
  const vars = () => new Map([...args, ...Object.entries(out.env)]);
  const at = (path: string) => join(root, posix.resolve(out.workdir, path));
  for (const step of stage.steps) {
    switch (step.op) {
      case 'ARG':
        args.set(step.name, options.buildArgs?.[step.name] ?? step.value ?? file.args.get(step.name) ?? '');
        break;
      case 'ENV':
        for (const [k, v] of step.vars) out.env[k] = expand(v, vars());
        break;
      case 'LABEL':
        for (const [k, v] of step.labels) out.labels[k] = expand(v, vars());
        break;
      case 'WORKDIR':
        out.workdir = posix.resolve(out.workdir, expand(step.path, vars()));
        mkdirSync(at('.'), { recursive: true });
        break;
      case 'COPY':
        copy(step, at, step.from ? deps.get(step.from)!.root : options.context, step.from ? null : ignored);
        break;
      case 'RUN':
        out.output += await run(step, at('.'), root, { ...options.baseEnv, HOME: join(root, 'root'), ...Object.fromEntries(args), ...out.env }, options.caches);
        break;
      case 'USER': {
        const [u, g] = step.user.split(':');
        const id = (name: string) => (/^\d+$/.test(name) ? Number(name) : baseUsers[name]);
        if (id(u!) === undefined) throw new Error(`USER ${step.user}: no such user in the base image`);
        out.user = { uid: id(u!)!, gid: id(g ?? u!)! };
        break;
      }
      case 'EXPOSE':
        out.expose.push(...step.ports);
        break;
      case 'CMD':
        out.cmd = step.argv;
        break;
      case 'HEALTHCHECK':
        out.healthcheck = step.argv;
        break;
    }
  }
  return out;
}

/** Whether a context path (relative, posix) is left out of the build context by .dockerignore. */
function contextFilter(context: string): (path: string) => boolean {
  const file = join(context, '.dockerignore');
  const rules = ignore().add(existsSync(file) ? readFileSync(file, 'utf8').split('\n') : []);
  return (path) => rules.ignores(path);
}

/** COPY: a directory's contents into the destination directory, a file into it (or onto a file path). */
function copy(step: Extract<Step, { op: 'COPY' }>, at: (path: string) => string, from: string, ignored: ((p: string) => boolean) | null): void {
  const destDir = step.dest.endsWith('/') || step.sources.length > 1;
  for (const source of step.sources) {
    const rel = posix.normalize(source).replace(/^\/+/, '');
    const src = join(from, rel);
    if ((ignored && ignored(rel)) || !existsSync(src)) throw new Error(`COPY ${source}: not in the ${ignored ? 'build context' : 'stage'}`);
    const dest = destDir && !lstatSync(src).isDirectory() ? join(at(step.dest), posix.basename(rel)) : at(step.dest);
    mkdirSync(dirname(dest), { recursive: true });
    cpSync(src, dest, {
      recursive: true,
      // the build context is what .dockerignore leaves (the path relative to the context root)
      filter: (path) => !ignored || path === src || !ignored(relative(from, path).split('\\').join('/')),
    });
  }
}

/** RUN: the shell command in the stage's WORKDIR, cache mounts in place for its duration. */
async function run(step: Extract<Step, { op: 'RUN' }>, cwd: string, root: string, env: Record<string, string>, caches: Record<string, string>): Promise<string> {
  const absolute = /(^|[\s=;&|'"])\/(?!dev\/null)\S*/.exec(step.command);
  if (absolute) throw new Error(`RUN ${step.command}: an absolute path (${absolute[0].trim()}) the replay cannot map; use a path relative to WORKDIR`);
  const mounts = step.caches.map((target) => {
    const host = caches[target];
    if (!host) throw new Error(`RUN --mount=type=cache,target=${target}: no host directory for it`);
    const path = join(root, target);
    mkdirSync(dirname(path), { recursive: true });
    rmSync(path, { recursive: true, force: true });
    symlinkSync(host, path);
    return path;
  });
  try {
    return await new Promise<string>((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', step.command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
      child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
      child.once('error', reject);
      child.once('exit', (code) => (code === 0 ? resolve(output) : reject(new Error(`RUN ${step.command}: exit ${code}\n${output.slice(-6000)}`))));
    });
  } finally {
    for (const path of mounts) rmSync(path, { force: true });
  }
}

/** Every file under `dir` (relative paths), for asserting what a stage holds. */
export function listFiles(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? listFiles(dir, posix.join(under, e.name)) : [posix.join(under, e.name)]);
}

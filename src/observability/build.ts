import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// What build is running, for `igw_build_info`: the version from package.json and the git commit, read
// once at start. The commit comes from the environment the image was built or deployed with (GIT_COMMIT,
// else BUILD_COMMIT, SOURCE_COMMIT), else from `git rev-parse` when the process runs from a checkout,
// else "unknown". Never per scrape.

// src/observability/ and dist/observability/ are both two levels under the package root
const root = fileURLToPath(new URL('../..', import.meta.url));

export interface BuildInfo {
  version: string;
  commit: string;
}

const plainCommit = /^[0-9a-zA-Z._-]{1,64}$/;

let memo: BuildInfo | undefined;

export function buildInfo(env: Record<string, string | undefined> = process.env): BuildInfo {
  if (memo && env === process.env) return memo;
  let version = 'unknown';
  try {
    version = String((JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    // no package.json next to the code: version stays unknown
  }
  const fromEnv = [env.GIT_COMMIT, env.BUILD_COMMIT, env.SOURCE_COMMIT].find((v) => v && plainCommit.test(v));
  const info = { version, commit: fromEnv ?? gitCommit() ?? 'unknown' };
  if (env === process.env) memo = info;
  return info;
}

function gitCommit(): string | undefined {
  try {
    const out = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, timeout: 2_000, stdio: ['ignore', 'pipe', 'ignore'] });
    const commit = out.toString().trim();
    return plainCommit.test(commit) ? commit : undefined;
  } catch {
    return undefined; // no git, or not a checkout (an image)
  }
}

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import type { Nodes } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { toString as textOf } from 'mdast-util-to-string';
import { describe, expect, it } from 'vitest';

// Every relative link of the README, the docs pages, the benchmark notes and CONTRIBUTING.md resolves: the
// file (or folder) exists, and a #fragment names a heading of the page it points to, slugged as GitHub
// slugs it. Markdown is parsed (CommonMark), so a link-like text in code is not a link.

const root = fileURLToPath(new URL('../..', import.meta.url));
const pages = [
  'README.md', 'CONTRIBUTING.md', 'bench/README.md',
  ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`),
];

function walk(node: Nodes, visit: (node: Nodes) => void): void {
  visit(node);
  if ('children' in node) for (const child of node.children) walk(child, visit);
}

const trees = new Map<string, Nodes>();
function tree(page: string): Nodes {
  let parsed = trees.get(page);
  if (!parsed) trees.set(page, (parsed = fromMarkdown(readFileSync(join(root, page), 'utf8'))));
  return parsed;
}

/** The fragments a page's headings answer to. */
function anchors(page: string): Set<string> {
  const slugger = new GithubSlugger();
  const found = new Set<string>();
  walk(tree(page), (node) => {
    if (node.type === 'heading') found.add(slugger.slug(textOf(node)));
  });
  return found;
}

/** Every link, image and link definition of a page, as written. */
function targets(page: string): string[] {
  const found: string[] = [];
  walk(tree(page), (node) => {
    if (node.type === 'link' || node.type === 'image' || node.type === 'definition') found.push(node.url);
  });
  return found;
}

/** What is wrong with one link of a page, or null when it resolves. */
function check(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: … are not checked here
  const [path = '', fragment] = target.split('#', 2);
  const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
  if (relative(root, join(root, file)).startsWith('..')) return `${target}: outside the repository`;
  if (!existsSync(join(root, file))) return `${target}: no such file`;
  if (fragment === undefined || !file.endsWith('.md')) return null;
  return anchors(file).has(decodeURIComponent(fragment)) ? null : `${target}: no heading #${fragment} in ${file}`;
}

describe('the README', () => {
  it('fits a screen or so (at most 250 lines), keeps the quick start, and links every page under docs/', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    expect(readme).toMatch(/^npm install && npm start {3}# /m);
    expect(readme).toMatch(/^npm test {19}# /m);
    const linked = new Set(targets('README.md'));
    const unlinked = pages.filter((page) => page.startsWith('docs/') && !linked.has(page));
    expect(unlinked).toEqual([]);
  });
});

describe('relative links in the docs', () => {
  it.each(pages)('%s: every link resolves (file and #heading)', (page) => {
    const links = targets(page);
    const broken = links.map((target) => check(page, target)).filter((problem) => problem !== null);
    expect(broken).toEqual([]);
  });

  it('the check is not vacuous: the pages hold relative links with fragments, and a wrong one is caught', () => {
    const all = pages.flatMap((page) => targets(page).map((target) => ({ page, target })));
    expect(all.filter(({ target }) => !/^[a-z]+:/i.test(target) && target.includes('#')).length).toBeGreaterThan(20);
    expect(check('README.md', 'docs/sync.md#no-such-heading')).toMatch(/no heading/);
    expect(check('README.md', 'docs/no-such-page.md')).toMatch(/no such file/);
    expect(check('docs/sync.md', '../README.md#serve-your-indexers-database')).toBeNull();
  });
});

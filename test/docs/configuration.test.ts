import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigurationPage } from '../../src/cli/configuration-page.js';
import { configSchema } from '../../src/config.js';

// docs/configuration.md is rendered from the environment's schema; the topic pages that quote a variable's
// default in a table must quote the schema's.

const root = new URL('../..', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const pages = ['README.md', ...readdirSync(new URL('docs/', root)).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Table rows that start with variables and give their defaults: `| \`A\` / \`B\` | \`1\` / \`2\` | …`. */
function documentedDefaults(page: string): { page: string; name: string; quoted: string }[] {
  const rows = [...read(page).matchAll(/^\| ((?:`[A-Z][A-Z0-9_]*`(?: \/ )?)+) \| ([^|]+) \|/gm)];
  return rows.flatMap(([, names, defaults]) => {
    const variables = [...names!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!);
    const values = defaults!.trim().split(' / ').map((v) => /^`([^`]*)`/.exec(v)?.[1] ?? v.trim());
    return variables.map((name, i) => ({ page, name, quoted: values[i] ?? '' }));
  });
}

describe('docs/configuration.md', () => {
  it('is fresh (equal to what npm run docs:config renders)', () => {
    expect(read('docs/configuration.md'), 'docs/configuration.md is stale: run `npm run docs:config` and commit the result')
      .toBe(renderConfigurationPage());
  });

  it('lists every variable of the schema, each with a description', () => {
    const page = read('docs/configuration.md');
    for (const name of Object.keys(configSchema.shape)) expect(page).toContain(`| \`${name}\` |`);
  });

  it("the README and the topic pages quote the schema's defaults", () => {
    // the schema's own defaults ('—' where there is none: a bound loadConfig derives, like HTTP_MAX_HELD_CONNECTIONS)
    const defaults = configSchema.parse({}) as Record<string, unknown>;
    const quoted = pages.filter((p) => p !== 'docs/configuration.md').flatMap(documentedDefaults)
      .filter((row) => row.name in configSchema.shape);
    expect(quoted.length).toBeGreaterThan(50);
    const wrong = quoted.filter((row) => row.quoted !== (defaults[row.name] === undefined ? '—' : String(defaults[row.name])));
    expect(wrong.map((r) => `${r.page}: ${r.name} says ${r.quoted}, the schema ${String(defaults[r.name])}`)).toEqual([]);
  });
});

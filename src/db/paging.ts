import type { Sql } from './client.js';

export type Direction = 'ASC' | 'DESC';

/** One column of a keyset order: the SQL expression, the row field holding its value, its type. */
export interface SortKey {
  column: string;
  field: string;
  cast: 'numeric' | 'bigint' | 'integer' | 'text' | 'timestamptz';
}

/**
 * A forward scan of one page. `after` holds the sort-key values of the last row already seen
 * (keyset pagination: a deep page costs the same as the first); `offset` skips rows after that point
 * (legacy clients page by offset). Backward pagination is a forward scan in the other direction,
 * decided by the caller.
 */
export interface PageRequest {
  limit: number;
  offset: number;
  direction: Direction;
  after?: readonly string[] | null;
}

/** Rows of one page, plus whether more rows follow it. */
export interface Page<Row> {
  rows: Row[];
  hasMore: boolean;
}

type Fragment = ReturnType<Sql['unsafe']>;
const fixedFragments = new WeakMap<Sql, Map<string, Fragment>>();

/**
 * `sql.unsafe(text)` built once per Sql and text, for texts from the code's own lists (never input): a
 * postgres.js fragment is a Query (a Promise with its resolvers), too costly to allocate per statement
 * for the same constant pieces (ORDER BY, LIMIT, casts, empty conditions); a fragment is only read when a
 * statement embedding it is built, so one object serves every statement.
 */
export function fixed(sql: Sql, text: string): Fragment {
  let texts = fixedFragments.get(sql);
  if (!texts) fixedFragments.set(sql, texts = new Map());
  let fragment = texts.get(text);
  if (!fragment) texts.set(text, fragment = sql.unsafe(text));
  return fragment;
}

/** The empty fragment (a condition that is not set), shared. */
export const empty = (sql: Sql): Fragment => fixed(sql, '');

const orderTexts = new WeakMap<readonly SortKey[], Record<Direction, string>>();

// Column names and directions come from the code's own key lists, never from input.
export function orderBy(sql: Sql, keys: readonly SortKey[], direction: Direction) {
  let texts = orderTexts.get(keys);
  if (!texts) {
    const text = (d: Direction) => `ORDER BY ${keys.map((k) => `${k.column} ${d}`).join(', ')}`;
    orderTexts.set(keys, texts = { ASC: text('ASC'), DESC: text('DESC') });
  }
  return fixed(sql, texts[direction]);
}

/** `AND (a, b) > ($1::t1, $2::t2)` for the keyset position, or nothing on the first page. */
export function keysetAfter(sql: Sql, keys: readonly SortKey[], page: PageRequest) {
  if (!page.after) return empty(sql);
  if (page.after.length !== keys.length) throw new RangeError('cursor does not fit this list');
  const values = keys
    .map((k, i) => sql`${page.after![i]!}::${fixed(sql, k.cast)}`)
    .reduce((acc, f) => sql`${acc}, ${f}`);
  const op = page.direction === 'ASC' ? '>' : '<';
  return sql`AND (${fixed(sql, keys.map((k) => k.column).join(', '))}) ${fixed(sql, op)} (${values})`;
}

/**
 * Row counts written into the statement as literals (page sizes 1, 5, 10, 15, 20, 25, 30, 50, 100 and the
 * maximum 1,000, plus the row that tells whether a next page exists); any other count is a parameter.
 */
const literalLimits = new Set([2, 6, 11, 16, 21, 26, 31, 51, 101, 1001]);

/**
 * `LIMIT n [OFFSET $k]`. A prepared statement whose LIMIT or OFFSET is a parameter never gets a usable
 * generic plan: the planner estimates an unknown LIMIT at 10 % of the rows, so the plan cache keeps
 * planning a custom plan on every execution (bench/results/explain-*.txt: `auto→custom` for every page).
 * So the common page sizes are literals (a bounded set: a few statements per shape, never one per
 * value a client picks) and a first page has no OFFSET: a page-1 statement without other parameters is
 * planned once per connection, and one with parameters gets a generic plan as good as the custom one.
 */
export function limitOffset(sql: Sql, page: PageRequest) {
  // one extra row tells whether a next page exists without a second query
  const rows = page.limit + 1;
  const limit = literalLimits.has(rows) ? fixed(sql, `LIMIT ${rows}`) : sql`LIMIT ${rows}`;
  return page.offset > 0 ? sql`${limit} OFFSET ${page.offset}` : limit;
}

export function toPage<Row>(rows: readonly Row[], page: PageRequest): Page<Row> {
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** The values of a row's sort keys, as strings, for a cursor. */
export function keyValues(row: Record<string, unknown>, keys: readonly SortKey[]): string[] {
  return keys.map((k) => {
    const v = row[k.field];
    return v instanceof Date ? v.toISOString() : String(v);
  });
}

/** Splits the rows of a LATERAL page query by parent key, keeping every parent (empty pages too). */
export function groupPages<Row extends { parent: string }>(
  parents: readonly string[], rows: readonly Row[], page: PageRequest,
): Map<string, Page<Row>> {
  const byParent = new Map<string, Row[]>(parents.map((p) => [p, []]));
  for (const row of rows) byParent.get(row.parent)?.push(row);
  return new Map([...byParent].map(([parent, list]) => [parent, toPage(list, page)]));
}

/**
 * The rows of a batch of keys, one column per list (all of one length), for `FROM … AS k (a, b)`: one
 * key is `(VALUES ($1::t, $2::u))`, several `unnest($1::t[], $2::u[])`. Loaders mostly ask for one key,
 * and the single-key statement gets a generic plan as good as its custom one (a parameter array is
 * estimated at 100 elements in a generic plan, so the plan cache re-plans the unnest form on every
 * execution). `ordinality` adds the key's position (1-based, bigint) as the last column.
 */
export function keyRows(sql: Sql, columns: readonly (readonly [values: readonly unknown[], type: KeyType])[], ordinality = false) {
  if (columns.length === 1 && columns[0]![0].length === 1 && !ordinality) {
    // one key of one column (a loader's usual batch): one fragment
    const [[values, type]] = columns as [readonly [readonly unknown[], KeyType]];
    return sql`(VALUES (${values[0] as string}::${fixed(sql, type)}))`;
  }
  if (columns[0]?.[0].length === 1) {
    const values = columns.map(([v, type]) => sql`${v[0] as string}::${fixed(sql, type)}`)
      .reduce((acc, f) => sql`${acc}, ${f}`);
    return ordinality ? sql`(VALUES (${values}, 1::bigint))` : sql`(VALUES (${values}))`;
  }
  const arrays = columns.map(([v, type]) => sql`${v as string[]}::${fixed(sql, `${type}[]`)}`)
    .reduce((acc, f) => sql`${acc}, ${f}`);
  return ordinality ? sql`unnest(${arrays}) WITH ORDINALITY` : sql`unnest(${arrays})`;
}

export type KeyType = 'text' | 'bigint' | 'numeric';

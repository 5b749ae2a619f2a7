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

// Column names and directions come from the code's own key lists, never from input.
export function orderBy(sql: Sql, keys: readonly SortKey[], direction: Direction) {
  return sql.unsafe(`ORDER BY ${keys.map((k) => `${k.column} ${direction}`).join(', ')}`);
}

/** `AND (a, b) > ($1::t1, $2::t2)` for the keyset position, or nothing on the first page. */
export function keysetAfter(sql: Sql, keys: readonly SortKey[], page: PageRequest) {
  if (!page.after) return sql``;
  if (page.after.length !== keys.length) throw new RangeError('cursor does not fit this list');
  const values = keys
    .map((k, i) => sql`${page.after![i]!}::${sql.unsafe(k.cast)}`)
    .reduce((acc, f) => sql`${acc}, ${f}`);
  const op = page.direction === 'ASC' ? '>' : '<';
  return sql`AND (${sql.unsafe(keys.map((k) => k.column).join(', '))}) ${sql.unsafe(op)} (${values})`;
}

export function limitOffset(sql: Sql, page: PageRequest) {
  // one extra row tells whether a next page exists without a second query
  return sql`LIMIT ${page.limit + 1} OFFSET ${page.offset}`;
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

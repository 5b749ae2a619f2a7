import { GraphQLError, Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import { keyValues, type Direction, type Page, type PageRequest, type SortKey } from '../db/paging.js';
import { builder } from './builder.js';
import type { Context, PagingConfig } from './context.js';

// Connections page by keyset cursors (a deep page costs what the first does) and also accept `offset`,
// because legacy clients page by offset. A cursor is the base64url JSON of the row's sort-key values.

export interface ConnectionArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
  offset?: number | null;
}

// Every connection's totalCount: the lazy total each connection carries (toConnection), computed only
// when selected.
builder.globalConnectionField('totalCount', (t) =>
  t.int({
    description: 'Number of items in the whole list (all pages).',
    // a count is a statement: none once the result is over its budget
    resolve: (parent, _args, ctx) => {
      ctx.budget.check();
      return parent.totalCount();
    },
  }),
);

/** The `offset` argument every list field takes in addition to the Relay arguments. */
export const offsetArg = () =>
  builder.args((t) => ({
    offset: t.int({ description: 'Items to skip (after `after`, if given). Prefer cursors for deep pages.' }),
  }));

export const badInput = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });

// A cursor value must be one the database accepts for its key's type: anything else (a value of another
// order, a forged one) is the client's mistake, not a cast error deep in SQL.
const inRange = (v: string, min: bigint, max: bigint) => BigInt(v) >= min && BigInt(v) <= max;
const valuePatterns: Record<SortKey['cast'], (v: string) => boolean> = {
  numeric: (v) => /^-?\d{1,90}(\.\d{1,90})?$/.test(v),
  bigint: (v) => /^-?\d{1,19}$/.test(v) && inRange(v, -(2n ** 63n), 2n ** 63n - 1n),
  integer: (v) => /^-?\d{1,10}$/.test(v) && inRange(v, -(2n ** 31n), 2n ** 31n - 1n),
  text: (v) => v.length <= 1_000,
  // exactly what keyValues writes (Date#toISOString); Date.parse alone accepts "5" or "Tue Mar 01 2001"
  timestamptz: (v) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(v) && !Number.isNaN(Date.parse(v)) &&
    new Date(v).toISOString() === v,
};

export function encodeCursor(values: readonly string[]): string {
  return Buffer.from(JSON.stringify(values)).toString('base64url');
}

function decodeCursor(cursor: string, keys: readonly SortKey[]): string[] {
  let values: unknown;
  try {
    values = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw badInput('invalid cursor');
  }
  if (
    !Array.isArray(values) || values.length !== keys.length ||
    !values.every((v, i) => typeof v === 'string' && valuePatterns[keys[i]!.cast](v))
  ) {
    throw badInput('invalid cursor: it belongs to another list or order');
  }
  return values as string[];
}

/** Rows a page holds at most: `first` or `last`, else the default, clamped to MAX_PAGE_SIZE. */
export function pageSize(args: ConnectionArgs, paging: PagingConfig): number {
  return Math.max(0, Math.min(args.first ?? args.last ?? paging.defaultPageSize, paging.maxPageSize));
}

/**
 * The cost of a connection field (@pothos/plugin-complexity): its selection once per row of the page it
 * will hold, computed from the arguments after variables and defaults are applied. `offset` moves the
 * page without growing it.
 */
export const connectionComplexity = (args: ConnectionArgs, ctx: Context) => ({ field: 1, multiplier: pageSize(args, ctx.paging) });

export interface PagePlan {
  request: PageRequest;
  backward: boolean;
  args: ConnectionArgs;
}

/** Turns connection arguments into one forward scan (backward pages scan the other way). */
export function planPage(args: ConnectionArgs, keys: readonly SortKey[], direction: Direction, ctx: Context): PagePlan {
  const { first, last, after, before } = args;
  const offset = args.offset ?? 0;
  if (first != null && last != null) throw badInput('pass `first` or `last`, not both');
  if (first != null && first < 0) throw badInput('`first` must be ≥ 0');
  if (last != null && last < 0) throw badInput('`last` must be ≥ 0');
  if (offset < 0) throw badInput('`offset` must be ≥ 0');
  if (after != null && before != null) throw badInput('pass `after` or `before`, not both');
  // a page is read in one direction: forward (first/after) or backward (last/before)
  if (first != null && before != null) throw badInput('`before` goes with `last`, not `first`');
  if (last != null && after != null) throw badInput('`after` goes with `first`, not `last`');
  const backward = last != null || before != null;
  const size = pageSize(args, ctx.paging);
  const flip = (d: Direction): Direction => (d === 'ASC' ? 'DESC' : 'ASC');
  const cursor = backward ? before : after;
  return {
    backward,
    args,
    request: {
      limit: size,
      offset,
      direction: backward ? flip(direction) : direction,
      after: cursor != null ? decodeCursor(cursor, keys) : null,
    },
  };
}

// The objects of a connection are built lazily, with their lazy members (cursors, the edges) on class
// prototypes: cursors are encoded only when a client selects them (the v2 methods never do), the edges are
// built only when selected and then counted against the result budget right away, so a page served again
// from a loader's cache (the tick of each of 1,000 holders) allocates nothing early; and the budget's size
// estimate, which reads own properties only (src/graphql/result-budget.ts), never triggers them.
type CursorOf<Row> = (node: Row) => string;

class Edge<Row> {
  constructor(readonly node: Row, private readonly cursorOf: CursorOf<Row>) {}
  get cursor(): string { return this.cursorOf(this.node); }
}

class PageInfo<Row> {
  constructor(
    readonly hasNextPage: boolean,
    readonly hasPreviousPage: boolean,
    private readonly rows: readonly Row[],
    private readonly cursorOf: CursorOf<Row>,
  ) {}
  get startCursor(): string | null { return this.rows.length ? this.cursorOf(this.rows[0]!) : null; }
  get endCursor(): string | null { return this.rows.length ? this.cursorOf(this.rows.at(-1)!) : null; }
}

class Connection<Row> {
  private built: Edge<Row>[] | undefined;
  private total: Promise<number> | undefined;
  constructor(
    private readonly rows: readonly Row[],
    private readonly cursorOf: CursorOf<Row>,
    readonly pageInfo: PageInfo<Row>,
    private readonly count: () => Promise<number>,
  ) {}
  get edges(): Edge<Row>[] { return (this.built ??= this.rows.map((node) => new Edge(node, this.cursorOf))); }
  totalCount(): Promise<number> { return (this.total ??= this.count()); }
}

/** The connection object for a fetched page; `count` runs only if the client selects totalCount. */
export function toConnection<Row extends object>(
  page: Page<Row>, plan: PagePlan, keys: readonly SortKey[], count: () => Promise<number>,
): Connection<Row> {
  const rows = plan.backward ? [...page.rows].reverse() : page.rows;
  const cursorOf = (node: Row) => encodeCursor(keyValues(node as Record<string, unknown>, keys));
  const hasMoreBefore = plan.backward ? page.hasMore : plan.args.after != null || (plan.args.offset ?? 0) > 0;
  const hasMoreAfter = plan.backward ? plan.args.before != null || (plan.args.offset ?? 0) > 0 : page.hasMore;
  return new Connection(rows, cursorOf, new PageInfo(hasMoreAfter, hasMoreBefore, rows, cursorOf), count);
}

/**
 * The total of a connection: started at once when the operation selects `totalCount` on this field (the
 * count then runs beside the page's statement: one round trip for the request instead of two in a row),
 * else on first use, as before. A failure of an early count surfaces where totalCount is resolved.
 */
export function totalOf(info: GraphQLResolveInfo, count: () => Promise<number>): () => Promise<number> {
  if (!info.fieldNodes.some((node) => node.selectionSet && selectsTotal(node.selectionSet, info, 0))) return count;
  const early = count();
  early.catch(() => {}); // awaited by totalCount; a page that fails first must not leave it unhandled
  return () => early;
}

/** `totalCount` selected without a directive, directly or through (inline) fragments a few levels deep. */
function selectsTotal(set: SelectionSetNode, info: GraphQLResolveInfo, depth: number): boolean {
  if (depth > 3) return false;
  for (const s of set.selections) {
    if (s.directives?.length) continue; // @include/@skip: counted when resolved, as before
    if (s.kind === Kind.FIELD) {
      if (s.name.value === 'totalCount') return true;
    } else if (s.kind === Kind.INLINE_FRAGMENT) {
      if (selectsTotal(s.selectionSet, info, depth + 1)) return true;
    } else {
      const fragment = info.fragments?.[s.name.value];
      if (fragment && selectsTotal(fragment.selectionSet, info, depth + 1)) return true;
    }
  }
  return false;
}

import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLError, GraphQLFieldResolver } from 'graphql';
import { resultTooLarge, tooManyNodes, type RowBudget } from '../loaders/index.js';

// The hard cap behind the cost estimate (src/graphql/plugins/use-cost-limit.ts): whatever the estimate missed, one operation
// may not build a result of more than `maxNodes` objects and list items nor of more than `maxBytes`
// (estimated from the rows as resolvers produce them). Once over, every further object or list field of
// the operation fails before its resolver runs, so no further statement is sent, and the operation's
// answer is this one error without partial data.

export interface ResultLimits {
  /** Objects and list items of one operation's result (GRAPHQL_MAX_RESULT_NODES). */
  maxNodes: number;
  /** Estimated bytes of one operation's result (GRAPHQL_MAX_RESPONSE_BYTES). */
  maxBytes: number;
}

/** Per-key overhead of a JSON member (quotes, colon, comma) and the size of a non-string value. */
const memberOverhead = 4;
const otherValueBytes = 8;
const dateBytes = 26; // "2024-01-16T10:18:46.000Z"

/**
 * Bytes the object's own data takes in JSON, roughly: strings at their length, dates at their ISO length,
 * anything else 8, plus the key names. Reads own enumerable properties only: lazy members live on
 * prototypes (src/graphql/paging.ts) and are not triggered. Computed again at each emission (no memo:
 * a WeakMap of every row costs more in GC than the sums it saves; at most GRAPHQL_MAX_RESULT_NODES sums).
 */
function estimateBytes(value: unknown): number {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? value.length + 2 : otherValueBytes;
  let size = 2;
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const v = record[key];
    size += key.length + memberOverhead +
      (typeof v === 'string' ? v.length + 2 : v instanceof Date ? dateBytes : otherValueBytes);
  }
  return size;
}

/** Also the page loaders' row budget (src/loaders/index.ts): they read its counts and set `exceeded` themselves. */
export class ResultBudget implements RowBudget {
  nodes = 0;
  bytes = 0;
  /** Set once a limit is passed: the operation's whole answer. */
  exceeded: GraphQLError | null = null;

  constructor(readonly limits: ResultLimits) {}

  /** A budget with the same limits for another operation (each JSON-RPC batch element has its own). */
  fresh(): ResultBudget {
    return new ResultBudget(this.limits);
  }

  /** Throws once the operation is over a limit: called before a resolver may send a statement. */
  check(): void {
    if (this.exceeded) throw this.exceeded;
  }

  /** Counts a resolved value (an object, a list of them, or null) and passes it on, or throws. */
  count<T>(value: T): T {
    if (value == null) return value;
    if (Array.isArray(value)) {
      this.nodes += value.length;
      for (const item of value) this.bytes += estimateBytes(item);
    } else {
      this.nodes += 1;
      this.bytes += estimateBytes(value);
    }
    if (this.nodes > this.limits.maxNodes) {
      this.exceeded ??= tooManyNodes(this.limits.maxNodes);
    } else if (this.bytes > this.limits.maxBytes) {
      this.exceeded ??= resultTooLarge(`more than ${this.limits.maxBytes} bytes (GRAPHQL_MAX_RESPONSE_BYTES)`);
    }
    this.check();
    return value;
  }
}

/** What a context must hold for the plugin to count. */
export interface BudgetContext {
  budget: ResultBudget;
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === 'function';

/**
 * Pothos plugin: every field whose value is an object or a list (scalars are bounded by their parent)
 * checks the budget before it resolves and counts what it resolved to.
 */
class ResultBudgetPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    if (fieldConfig.type.kind === 'Scalar' || fieldConfig.type.kind === 'Enum') return resolver;
    return (parent, args, context, info) => {
      const budget = (context as Partial<BudgetContext>).budget;
      if (!budget) return resolver(parent, args, context, info);
      budget.check();
      const value = resolver(parent, args, context, info);
      return isThenable(value) ? Promise.resolve(value).then((v) => budget.count(v)) : budget.count(value);
    };
  }
}

const pluginName = 'resultBudget';
SchemaBuilder.registerPlugin(pluginName, ResultBudgetPlugin);
export default pluginName;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  export namespace PothosSchemaTypes {
    interface Plugins<Types extends SchemaTypes> {
      resultBudget: ResultBudgetPlugin<Types>;
    }
  }
}

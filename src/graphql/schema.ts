import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './types/chain.js';
import './types/tick.js';
import './types/holder.js';
import './types/balance.js';
import './types/movement.js';
import './types/transaction.js';
import './types/lookup.js';
import './types/calldata.js';
import './types/search.js';
import './types/activity.js';
import './types/live.js';

export const schema = builder.toSchema();

/** The SDL checked in as schema/schema.graphql (sorted, so diffs stay small). */
export function printSdl(): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

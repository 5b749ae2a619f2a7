import { movementEvents, tickStatuses, transferTypes } from '../domain/codes.js';
import { toFixedDown } from '../domain/decimal.js';

// v2 value formats (reference notes §4), applied to values as the GraphQL schema returns them:
// decimals arrive already in plain trimmed notation, times as ISO 8601 UTC strings or null.

const zeroTime = '0001-01-01T00:00:00Z';

/** ISO 8601 UTC string, the zero time for a time that never happened. */
export const isoTime = (value: string | null): string => value ?? zeroTime;

/** Unix seconds; 0 for a time that never happened. */
export const unixTime = (value: string | null): number => (value == null ? 0 : Math.floor(Date.parse(value) / 1000));

/** minted_percent: the capped ratio with exactly four decimals (truncated, so 1.0000 means complete). */
export const percent4 = (progress: string): string => toFixedDown(progress, 4);

export const transferTypeCode = (name: string): number => transferTypes.indexOf(name as (typeof transferTypes)[number]);
export const tickStatusCode = (name: string): number => tickStatuses[name as keyof typeof tickStatuses];
export const eventCode = (name: string): number => movementEvents[name as keyof typeof movementEvents];

/** An integer that GraphQL carries as a string (BigInt, ID) rendered as a JSON integer. */
export const integer = (value: string): number => Number(value);

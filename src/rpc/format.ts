import { movementEvents, tickStatuses, transferTypes } from '../domain/codes.js';
import { toFixedDown } from '../domain/decimal.js';
import { utcFieldsMs } from '../domain/utc-time.js';

// v2 value formats, as existing v2 clients read them (docs/json-rpc.md), applied to the GraphQL values:
// decimals arrive already in plain trimmed notation, times as ISO 8601 UTC strings or null.

const zeroTime = '0001-01-01T00:00:00Z';

/** ISO 8601 UTC string, the zero time for a time that never happened. */
export const isoTime = (value: string | null): string => value ?? zeroTime;

/**
 * Unix seconds; 0 for a time that never happened. The DateTime text (`2024-02-27T15:12:23Z`, a four-digit
 * year) is read field by field (Date.parse costs twice as much, on every time of every row); anything else
 * goes to Date.parse.
 */
export const unixTime = (value: string | null): number => {
  if (value == null) return 0;
  if (value.length !== 20 || value.charCodeAt(10) !== 84 /* T */ || value.charCodeAt(19) !== 90 /* Z */ || value.charCodeAt(4) !== 45 ||
      value.charCodeAt(7) !== 45 || value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58) {
    return Math.floor(Date.parse(value) / 1000);
  }
  // out-of-range fields (Date.parse's NaN or its day overflow) and years before 1000: Date.parse's rules
  const t = utcFieldsMs(value, 28);
  return Math.floor((Number.isNaN(t) ? Date.parse(value) : t) / 1000);
};

/** minted_percent: the capped ratio with exactly four decimals (truncated, so 1.0000 means complete). */
export const percent4 = (progress: string): string => toFixedDown(progress, 4);

export const transferTypeCode = (name: string): number => transferTypes.indexOf(name as (typeof transferTypes)[number]);
export const tickStatusCode = (name: string): number => tickStatuses[name as keyof typeof tickStatuses];
export const eventCode = (name: string): number => movementEvents[name as keyof typeof movementEvents];

/** An integer that GraphQL carries as a string (BigInt, ID) rendered as a JSON integer. */
export const integer = (value: string): number => Number(value);

import { movementEvents, tickStatuses, transferTypes } from '../domain/codes.js';
import { toFixedDown } from '../domain/decimal.js';

// v2 value formats (reference notes §4), applied to values as the GraphQL schema returns them:
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
  let bad = false;
  const digits = (from: number, count: number) => {
    let v = 0;
    for (let i = from; i < from + count; i++) {
      const d = value.charCodeAt(i) - 48;
      if (d < 0 || d > 9) bad = true;
      v = v * 10 + d;
    }
    return v;
  };
  const year = digits(0, 4);
  const month = digits(5, 2);
  const day = digits(8, 2);
  const hour = digits(11, 2);
  const minute = digits(14, 2);
  const second = digits(17, 2);
  // out-of-range fields (Date.parse's NaN or its day overflow) and years before 1000: Date.parse's rules
  if (bad || year < 1000 || month < 1 || month > 12 || day < 1 || day > 28 || hour > 23 || minute > 59 || second > 59) {
    return Math.floor(Date.parse(value) / 1000);
  }
  return Math.floor(Date.UTC(year, month - 1, day, hour, minute, second) / 1000);
};

/** minted_percent: the capped ratio with exactly four decimals (truncated, so 1.0000 means complete). */
export const percent4 = (progress: string): string => toFixedDown(progress, 4);

export const transferTypeCode = (name: string): number => transferTypes.indexOf(name as (typeof transferTypes)[number]);
export const tickStatusCode = (name: string): number => tickStatuses[name as keyof typeof tickStatuses];
export const eventCode = (name: string): number => movementEvents[name as keyof typeof movementEvents];

/** An integer that GraphQL carries as a string (BigInt, ID) rendered as a JSON integer. */
export const integer = (value: string): number => Number(value);

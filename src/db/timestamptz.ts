import { digitsAt, utcFieldsMs } from '../domain/utc-time.js';

/**
 * timestamptz as postgres.js reads it (a Date), without V8's slow path for PostgreSQL's text form: a UTC value
 * (`2024-02-06 01:02:03.123456+00`, what a UTC session sends) is read field by field, to the millisecond
 * (truncated, as `new Date(text)` does); any other form (an offset, BC, infinity) goes to `new Date(text)`.
 */
export function parseTimestamptz(text: string): Date {
  const n = text.length;
  const utc = n >= 22 && text.charCodeAt(n - 3) === 43 /* + */ && text.charCodeAt(n - 2) === 48 && text.charCodeAt(n - 1) === 48 &&
    text.charCodeAt(4) === 45 && text.charCodeAt(7) === 45 && text.charCodeAt(10) === 32 && text.charCodeAt(13) === 58 &&
    text.charCodeAt(16) === 58 && (n === 22 || (text.charCodeAt(19) === 46 /* . */ && n <= 29));
  if (!utc) return new Date(text);
  const fraction = n - 23; // digits after the dot: milliseconds, truncated; the rest checked, not used
  const ms = fraction > 0 ? digitsAt(text, 20, Math.min(fraction, 3)) * 10 ** (3 - Math.min(fraction, 3)) : 0;
  const rest = fraction > 3 ? digitsAt(text, 23, fraction - 3) : 0;
  // a field that is not digits or out of its range (never from PostgreSQL): the general parser's rules
  const t = utcFieldsMs(text, 31);
  return Number.isNaN(t) || Number.isNaN(ms) || Number.isNaN(rest) ? new Date(text) : new Date(t + ms);
}

/** postgres.js' own date type for timestamptz, with the parser above (serialising as it does). */
const timestamptz = {
  to: 1184,
  from: [1184],
  serialize: (x: Date | string | number) => (x instanceof Date ? x : new Date(x)).toISOString(),
  parse: parseTimestamptz,
};

// typed as the gateway's Sql has it (no custom types): the values stay the Dates the driver's own type gives
export const timestampTypes: Record<never, never> = { timestamptz };

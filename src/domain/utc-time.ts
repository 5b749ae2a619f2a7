// Reading a UTC time written `YYYY-MM-DD?HH:MM:SS…` field by field: V8's general parsers (`new Date(text)`,
// `Date.parse`) take their slow path on PostgreSQL's text and cost twice as much, on every time of every row.
// Callers check the separators of their own form; anything this refuses goes to the general parser.

/** The unsigned decimal of `count` digits at `from`, NaN when one of them is not a digit. */
export function digitsAt(text: string, from: number, count: number): number {
  let v = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return Number.NaN;
    v = v * 10 + d;
  }
  return v;
}

/**
 * Milliseconds since the epoch of the date and time at positions 0–18, or NaN when a field is not digits, the
 * year is before 1000, or a field is out of its range (the day above `maxDay`: the general parsers differ on
 * day overflow, so each caller says how far it can follow them).
 */
export function utcFieldsMs(text: string, maxDay: number): number {
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  // NaN fails every comparison below: `!(x <= max)` refuses it
  if (!(year >= 1000 && month >= 1 && month <= 12 && day >= 1 && day <= maxDay && hour <= 23 && minute <= 59 && second <= 59)) {
    return Number.NaN;
  }
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

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

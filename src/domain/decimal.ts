// Exact arithmetic on decimal strings (amounts exceed 2^64: never a JS number). Compared and truncated
// as digit strings: per row of a tick list, BigInt conversions cost several times as much.

const pattern = /^(\d+)(?:\.(\d+))?$/;

/** The integer digits without leading zeros (at least "0") and the fractional digits as written. */
function parts(value: string): [int: string, frac: string] {
  const m = pattern.exec(value);
  if (!m) throw new RangeError(`not a plain non-negative decimal: ${value}`);
  const digits = m[1]!;
  let i = 0;
  while (i < digits.length - 1 && digits.charCodeAt(i) === 48 /* 0 */) i++;
  return [i === 0 ? digits : digits.slice(i), m[2] ?? ''];
}

/** The fractional digits without trailing zeros. */
function trimZeros(frac: string): string {
  let end = frac.length;
  while (end > 0 && frac.charCodeAt(end - 1) === 48) end--;
  return end === frac.length ? frac : frac.slice(0, end);
}

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compareDecimal(a: string, b: string): number {
  const [ia, fa] = parts(a);
  const [ib, fb] = parts(b);
  // integer parts without leading zeros: the longer is larger, equal lengths compare digit by digit
  if (ia.length !== ib.length) return ia.length < ib.length ? -1 : 1;
  if (ia !== ib) return ia < ib ? -1 : 1;
  // fractions without trailing zeros compare digit by digit (a prefix is the smaller)
  const x = trimZeros(fa);
  const y = trimZeros(fb);
  return x === y ? 0 : x < y ? -1 : 1;
}

/** Exactly `places` fractional digits, truncated (so 1.0000 only ever means complete). */
export function toFixedDown(value: string, places: number): string {
  const [int, frac] = parts(value);
  if (places === 0) return int;
  return `${int}.${frac.length >= places ? frac.slice(0, places) : frac.padEnd(places, '0')}`;
}

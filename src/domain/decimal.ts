// Exact arithmetic on decimal strings (amounts exceed 2^64: never a JS number).

const pattern = /^(\d+)(?:\.(\d+))?$/;

function parts(value: string): [bigint, number] {
  const m = pattern.exec(value);
  if (!m) throw new RangeError(`not a plain non-negative decimal: ${value}`);
  const frac = m[2] ?? '';
  return [BigInt(m[1]! + frac), frac.length];
}

/** -1, 0 or 1 as a < b, a = b, a > b. */
export function compareDecimal(a: string, b: string): number {
  const [ia, sa] = parts(a);
  const [ib, sb] = parts(b);
  const scale = Math.max(sa, sb);
  const x = ia * 10n ** BigInt(scale - sa);
  const y = ib * 10n ** BigInt(scale - sb);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Exactly `places` fractional digits, truncated (so 1.0000 only ever means complete). */
export function toFixedDown(value: string, places: number): string {
  const [int, scale] = parts(value);
  const scaled = scale >= places ? int / 10n ** BigInt(scale - places) : int * 10n ** BigInt(places - scale);
  const digits = scaled.toString().padStart(places + 1, '0');
  return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

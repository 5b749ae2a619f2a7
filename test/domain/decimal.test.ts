import { describe, expect, it } from 'vitest';
import { compareDecimal, toFixedDown } from '../../src/domain/decimal.js';

// Exact decimal strings (src/domain/decimal.ts: compared and truncated as digit strings) checked against
// BigInt arithmetic, the way the module computed them before: every answer and every refusal the same, on
// the edge cases (leading and trailing zeros, integer against fraction, 2^64 and beyond) and on seeded
// random pairs.

function reference(value: string): [bigint, number] {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m) throw new RangeError(`not a plain non-negative decimal: ${value}`);
  const frac = m[2] ?? '';
  return [BigInt(m[1]! + frac), frac.length];
}
function referenceCompare(a: string, b: string): number {
  const [ia, sa] = reference(a);
  const [ib, sb] = reference(b);
  const scale = Math.max(sa, sb);
  const x = ia * 10n ** BigInt(scale - sa);
  const y = ib * 10n ** BigInt(scale - sb);
  return x < y ? -1 : x > y ? 1 : 0;
}
function referenceFixedDown(value: string, places: number): string {
  const [int, scale] = reference(value);
  const scaled = scale >= places ? int / 10n ** BigInt(scale - places) : int * 10n ** BigInt(places - scale);
  const digits = scaled.toString().padStart(places + 1, '0');
  return places === 0 ? digits : `${digits.slice(0, -places)}.${digits.slice(-places)}`;
}

/** The answer or the refusal's message. */
const outcome = (f: () => unknown) => {
  try {
    return f();
  } catch (error) {
    return `throws ${(error as Error).message}`;
  }
};

// a small seeded generator: the same pairs on every run
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
function decimal(next: () => number): string {
  const digits = (n: number) => Array.from({ length: n }, () => String(Math.floor(next() * 10))).join('');
  // short integer parts often collide, leading and trailing zeros appear, some have no fraction
  const int = next() < 0.2 ? `0${digits(Math.floor(next() * 3))}` : digits(1 + Math.floor(next() * 25));
  const r = next();
  if (r < 0.3) return int;
  const frac = digits(1 + Math.floor(next() * 20));
  return `${int}.${r < 0.5 ? `${frac}000` : frac}`;
}

const edges = ['0', '00', '0.0', '0.000', '1', '01', '1.0', '1.00001', '0.1', '0.10', '0.09', '10', '9.99999',
  '18446744073709551616', '18446744073709551615.9', '21000000', '021000000.000', '1.5', '1.49', '1.50'];
const malformed = ['', '-1', '1.', '.5', '1e3', ' 1', '1,5', 'NaN', '0x10'];

describe('compareDecimal', () => {
  it('agrees with BigInt arithmetic on every pair of edge cases', () => {
    for (const a of edges) for (const b of edges) expect(compareDecimal(a, b), `${a} vs ${b}`).toBe(referenceCompare(a, b));
  });

  it('agrees on 20,000 seeded random pairs, equal values written differently included', () => {
    const next = random(20261126);
    for (let i = 0; i < 20_000; i++) {
      const a = decimal(next);
      const b = next() < 0.1 ? `0${a}${a.includes('.') ? '0' : ''}` : decimal(next);
      expect(compareDecimal(a, b), `${a} vs ${b}`).toBe(referenceCompare(a, b));
    }
  });

  it('refuses what is not a plain non-negative decimal, as before', () => {
    for (const bad of malformed) {
      expect(outcome(() => compareDecimal(bad, '1'))).toBe(outcome(() => referenceCompare(bad, '1')));
      expect(outcome(() => compareDecimal(bad, '1'))).toMatch(/^throws not a plain non-negative decimal/);
    }
  });
});

describe('toFixedDown', () => {
  it('agrees with BigInt arithmetic on the edge cases and 20,000 seeded random values, 0 to 8 places', () => {
    const next = random(7);
    const values = [...edges, ...Array.from({ length: 20_000 }, () => decimal(next))];
    for (const [i, v] of values.entries()) {
      const places = i % 9;
      expect(toFixedDown(v, places), `${v} to ${places}`).toBe(referenceFixedDown(v, places));
    }
  });

  it('truncates, never rounds, and refuses malformed input as before', () => {
    expect(toFixedDown('0.99999', 4)).toBe('0.9999');
    expect(toFixedDown('1', 4)).toBe('1.0000');
    for (const bad of malformed) expect(outcome(() => toFixedDown(bad, 4))).toBe(outcome(() => referenceFixedDown(bad, 4)));
  });
});

// Deterministic randomness for the benchmark dataset: mulberry32 streams seeded by a 32-bit mix of
// (seed, tick, purpose), so every table's pass can regenerate exactly the same per-tick events without
// keeping them in memory. No Math.random, no clock. Amount draws are BigInt only.
import { Rng as SeedRng } from '../../src/db/seed/rng.js';

/** murmur3's 32-bit finaliser: a bijection on uint32 (used where uniqueness matters). */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit seed from several integers (order matters). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) h = fmix32((h ^ fmix32((p >>> 0) + 0x7f4a7c15)) + 0x165667b1);
  return h >>> 0;
}

/**
 * The seed PRNG (src/db/seed/rng.ts) with what the benchmark data needs besides: weighted picks, and its
 * own `below` (one draw for n ≤ 2^32): the bench data set is defined by these draws, so they stay as
 * they were when it was first generated.
 */
export class Rng extends SeedRng {
  /** index by cumulative weights (ascending, last = total) */
  weighted(cumulative: readonly number[]): number {
    const x = this.next() * cumulative[cumulative.length - 1]!;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  /** A bigint in [0, n), n > 0. Exact integer arithmetic; modulo bias < 2^-32 for large n. */
  override below(n: bigint): bigint {
    if (n <= 0n) throw new Error('below(n) needs n > 0');
    // u32 / 2^32 * n with n <= 2^32 stays below n after rounding (its error is < n·2^-53 < n·2^-32)
    if (n <= 0x1_0000_0000n) return BigInt(Math.floor(this.next() * Number(n)));
    const words = Math.ceil(n.toString(16).length / 8) + 1;
    let v = 0n;
    for (let w = 0; w < words; w++) v = (v << 32n) | BigInt(this.u32());
    return v % n;
  }
}

function isPrime(n: number): boolean {
  if (n < 2) return false;
  if (n % 2 === 0) return n === 2;
  for (let d = 3; d * d <= n; d += 2) if (n % d === 0) return false;
  return true;
}

export function nextPrime(n: number): number {
  let p = Math.max(2, Math.ceil(n));
  while (!isPrime(p)) p++;
  return p;
}

// Deterministic randomness for generated data sets (the demo seed, bench/ data): mulberry32, no
// Math.random, no clock. Amount draws are BigInt only.

export class Rng {
  private state: number;
  constructor(seed: number) { this.state = seed >>> 0; }

  /** mulberry32 */
  u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** [0, 1) */
  next(): number { return this.u32() / 4294967296; }
  /** (0, 1] */
  nextPos(): number { return (this.u32() + 1) / 4294967296; }
  /** integer in [lo, hi] */
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
  chance(p: number): boolean { return this.next() < p; }
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
  /** n lowercase hex digits */
  hex(n: number): string {
    let s = '';
    while (s.length < n) s += this.u32().toString(16).padStart(8, '0');
    return s.slice(0, n);
  }
  /** A bigint in [0, n), n > 0 (32 extra bits make the modulo bias negligible). */
  below(n: bigint): bigint {
    const bits = n.toString(2).length + 32;
    let v = 0n;
    for (let b = 0; b < bits; b += 32) v = (v << 32n) | BigInt(this.u32());
    return v % n;
  }
  /** A bigint in [1, n], n >= 1. */
  upTo(n: bigint): bigint { return this.below(n) + 1n; }
}

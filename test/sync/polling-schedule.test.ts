import { describe, expect, it } from 'vitest';
import { firstLeadMs } from '../../src/sync/polling.js';

// How long before its tick a polling cycle reads its first snapshot (src/sync/polling.ts): time for two
// early snapshots, each read and applied at the pace measured so far, and a margin (a quarter of their
// time and 30 ms).
describe('polling: the lead of a cycle\'s first snapshot', () => {
  it('leaves time for two early snapshots at the measured pace', () => {
    for (const r of [0.05, 0.3, 0.7]) {
      const lead = firstLeadMs({ intervalMs: 1000, earlyRate: r });
      const d1 = 20 + r * (1000 - lead);
      const d2 = 20 + r * d1;
      expect(lead, `rate ${r}`).toBeGreaterThanOrEqual(Math.floor(1.25 * (d1 + d2) + 30) - 1);
      expect(lead, `rate ${r}`).toBeLessThanOrEqual(Math.ceil(1.25 * (d1 + d2) + 30) + 1);
    }
  });

  it('is earlier the slower the apply, at most 80% of the interval; a first cycle assumes 0.3 ms per ms', () => {
    const leads = [0.02, 0.1, 0.3, 0.5, 0.9].map((earlyRate) => firstLeadMs({ intervalMs: 1000, earlyRate }));
    expect([...leads].sort((a, b) => a - b)).toEqual(leads);
    expect(firstLeadMs({ intervalMs: 1000, earlyRate: 5 })).toBeLessThanOrEqual(800);
    expect(firstLeadMs({ intervalMs: 1000 })).toBe(firstLeadMs({ intervalMs: 1000, earlyRate: 0.3 }));
    expect(firstLeadMs({ intervalMs: 50, earlyRate: 0.9 })).toBeLessThanOrEqual(40);
  });
});

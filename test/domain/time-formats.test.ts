import { describe, expect, it } from 'vitest';
import { parseTimestamptz } from '../../src/domain/utc-time.js';
import { isoSeconds } from '../../src/graphql/scalars.js';
import { unixTime } from '../../src/rpc/format.js';

// The hand-written time conversions on the hot path give exactly what the general ones give: the
// timestamptz reader what `new Date(text)` (postgres.js' own parser) gives, DateTime's text what
// `toISOString()` without milliseconds gives.

const pad = (n: number, width: number) => String(n).padStart(width, '0');
let seed = 17;
const random = (below: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % below;
};

describe('time formats', () => {
  it('reads PostgreSQL timestamptz text as new Date(text) does', () => {
    const samples = ['2024-02-06 01:02:03+00', '2023-06-01 12:34:56.789+00', '2023-12-31 23:59:59.999999+00', '2024-02-29 00:00:00.5+00',
      '1970-01-01 00:00:00+00', '9999-12-31 23:59:59.1+00', '0001-01-01 00:00:00+00', '0999-03-04 05:06:07+00', '2024-02-06 01:02:03+01',
      '2024-02-06 01:02:03-05:30', '2024-02-06 01:02:03.25+05:45', '0044-03-15 12:00:00+00 BC', 'infinity', '-infinity', '2024-13-45 99:99:99+00',
      '2024-0a-06 01:02:03+00', '2024-02-06T01:02:03+00', '2024-02-30 00:00:00+00', '2023-02-29 00:00:00+00', '2024-04-31 00:00:00+00',
      '2024-01-01 24:00:00+00', '2024-01-01 23:60:00+00', '2024-01-31 23:00:00.1234567+00'];
    for (let i = 0; i < 2_000; i++) {
      const fraction = random(7);
      const text = `${pad(1000 + random(9000), 4)}-${pad(1 + random(12), 2)}-${pad(1 + random(31), 2)} ${pad(random(24), 2)}:` +
        `${pad(random(60), 2)}:${pad(random(60), 2)}${fraction ? `.${pad(random(10 ** fraction), fraction)}` : ''}+00`;
      samples.push(text);
    }
    for (const text of samples) {
      const want = new Date(text);
      const got = parseTimestamptz(text);
      expect(got, text).toBeInstanceOf(Date);
      expect(Number.isNaN(got.getTime()) ? 'invalid' : got.getTime(), text).toBe(Number.isNaN(want.getTime()) ? 'invalid' : want.getTime());
    }
  });

  it('writes DateTime as toISOString() without the milliseconds', () => {
    const reference = (d: Date) => `${d.toISOString().slice(0, -5)}Z`;
    const dates = [new Date(0), new Date('0001-01-01T00:00:00Z'), new Date('0999-12-31T23:59:59.999Z'), new Date('1000-01-01T00:00:00Z'),
      new Date('9999-12-31T23:59:59.999Z'), new Date('+010000-01-01T00:00:00Z'), new Date('-000001-06-01T00:00:00Z')];
    for (let i = 0; i < 2_000; i++) dates.push(new Date(random(2 ** 31) * 1_000 * 60 + random(60_000)));
    for (const d of dates) expect(isoSeconds(d), d.toISOString()).toBe(reference(d));
    expect(() => isoSeconds(new Date(Number.NaN))).toThrow(RangeError);
  });

  it('reads DateTime text as unix seconds as Date.parse does', () => {
    const samples: (string | null)[] = [null, '0001-01-01T00:00:00Z', '1970-01-01T00:00:00Z', '2024-02-29T23:59:59Z', '2023-02-29T00:00:00Z',
      '2024-04-31T00:00:00Z', '2024-13-01T00:00:00Z', '2024-01-01T24:00:00Z', '2024-01-01T23:60:00Z', '2024-01-0xT00:00:00Z',
      '2024-01-01T00:00:00.5Z', '2024-01-01 00:00:00Z', '+010000-01-01T00:00:00Z', 'yesterday'];
    for (let i = 0; i < 2_000; i++) samples.push(isoSeconds(new Date(random(2 ** 31) * 1_000 * 60 + random(60_000))));
    const reference = (v: string | null) => (v == null ? 0 : Math.floor(Date.parse(v) / 1000));
    for (const v of samples) expect(unixTime(v), String(v)).toBe(reference(v));
  });
});

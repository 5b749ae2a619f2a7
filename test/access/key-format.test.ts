import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';

// The comparison path of a presented key: the secret's hash is always compared with
// crypto.timingSafeEqual, against the stored hash or (unknown prefix) a dummy, so that a wrong secret,
// a secret wrong in its last byte and an unknown prefix all cost the same one hash and one constant-time
// comparison. Counted by wrapping node:crypto's timingSafeEqual.

const calls = vi.hoisted(() => ({ n: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return {
    ...actual,
    timingSafeEqual: (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
      calls.n++;
      return actual.timingSafeEqual(a, b);
    },
  };
});

const { generateKey, hashSecret, loggablePrefix, parseKey, secretMatches } = await import('../../src/access/key-format.js');

describe('API key format', () => {
  it('is <igw + 8 hex>_<43 base64url characters> and its hash is SHA-256 of the secret', () => {
    const g = generateKey();
    expect(g.key).toMatch(/^igw[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    const parsed = parseKey(g.key)!;
    expect(parsed.prefix).toBe(g.prefix);
    expect(Buffer.from(parsed.secret, 'base64url')).toHaveLength(32);
    expect(g.secretSha256.equals(createHash('sha256').update(parsed.secret).digest())).toBe(true);
    expect(new Set(Array.from({ length: 200 }, () => generateKey().key)).size).toBe(200);
  });

  it('compares in constant time on every path that has a secret', () => {
    const g = generateKey();
    const { secret } = parseKey(g.key)!;
    calls.n = 0;
    expect(secretMatches(secret, g.secretSha256)).toBe(true);
    expect(calls.n).toBe(1);
    // the same secret but its last character changed
    const last = secret.endsWith('A') ? 'B' : 'A';
    expect(secretMatches(secret.slice(0, -1) + last, g.secretSha256)).toBe(false);
    expect(calls.n).toBe(2);
    // no stored hash (unknown prefix): compared against a dummy all the same
    expect(secretMatches(secret, undefined)).toBe(false);
    expect(calls.n).toBe(3);
    // a secret hashing to all zeros cannot exist, but the dummy must never match anyway
    expect(secretMatches(secret, Buffer.alloc(32))).toBe(false);
    expect(hashSecret(secret).equals(g.secretSha256)).toBe(true);
  });

  it('keeps only the public prefix of a presented key for logs', () => {
    const g = generateKey();
    expect(loggablePrefix(g.key)).toBe(g.prefix);
    expect(loggablePrefix('not-a-key')).toBeNull();
    expect(parseKey(`${g.key}x`)).toBeNull();
    expect(parseKey(` ${g.key}`)).toBeNull();
  });
});

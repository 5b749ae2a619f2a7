import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

// An API key is `<prefix>_<secret>`: `igw` and 8 hex digits (public: it finds the key's row and may be
// logged), then 32 random bytes in base64url (43 characters, 256 bits). Only SHA-256(secret) is stored.
// A fast hash is enough for a secret of full entropy: there is no dictionary to try, and a slow hash would
// cost every request tens of milliseconds.

export const keyPattern = /^(igw[0-9a-f]{8})_([A-Za-z0-9_-]{43})$/;

export interface GeneratedKey {
  /** The whole key, shown to the operator once. */
  key: string;
  prefix: string;
  secretSha256: Buffer;
}

export function generateKey(): GeneratedKey {
  const prefix = `igw${randomBytes(4).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  return { key: `${prefix}_${secret}`, prefix, secretSha256: hashSecret(secret) };
}

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The prefix and secret of a presented key; null when it does not have the shape of a key. */
export function parseKey(presented: string): { prefix: string; secret: string } | null {
  const m = keyPattern.exec(presented);
  return m ? { prefix: m[1]!, secret: m[2]! } : null;
}

const dummyHash = Buffer.alloc(32);

/**
 * Whether `secret` hashes to `stored`, in time that does not depend on where they differ. With no stored
 * hash (an unknown prefix) the same work is done against a dummy, so the answer takes as long.
 */
export function secretMatches(secret: string, stored: Buffer | undefined): boolean {
  const hash = hashSecret(secret);
  const against = stored && stored.length === 32 ? stored : dummyHash;
  return timingSafeEqual(hash, against) && against !== dummyHash;
}

/** A presented credential as it may appear in a log line: the prefix of a well-formed key, nothing else. */
export function loggablePrefix(presented: string): string | null {
  return keyPattern.exec(presented)?.[1] ?? null;
}

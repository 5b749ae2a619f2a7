// Entity tags (RFC 9110 §8.8.3, §13.1.2). A GraphQL answer's tag is its cache key, quoted and strong; the
// compressed representations of it carry the coding as a suffix ("key-br", "key-gzip": one tag per
// representation, as a strong tag must be; src/server/http.ts' compressor appends it). If-None-Match uses the
// weak comparison, so `W/"key"`, `"key-gzip"` and a list holding one of them all match the answer, and `*`
// matches any current answer.

const codings = ['', '-br', '-gzip', '-deflate'];

/** The tags a client may hold for the answer with this key (each representation's). */
export const etagsOf = (key: string) => codings.map((suffix) => `"${key}${suffix}"`);

const entityTag = /\s*(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/y;

/**
 * The tag of `current` that an If-None-Match header value matches, or null: `*` matches the first one,
 * a malformed header matches nothing (the request is answered in full).
 */
export function matchIfNoneMatch(header: string | null, current: readonly string[]): string | null {
  if (header === null || current.length === 0) return null;
  if (header.trim() === '*') return current[0]!;
  entityTag.lastIndex = 0;
  const sent = new Set<string>();
  while (entityTag.lastIndex < header.length) {
    const start = entityTag.lastIndex;
    const match = entityTag.exec(header);
    if (!match || entityTag.lastIndex === start) return null;
    sent.add(match[1]!);
  }
  return current.find((tag) => sent.has(tag)) ?? null;
}

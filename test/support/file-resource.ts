import { afterAll, beforeAll } from 'vitest';

/**
 * Something a test file (or describe) opens before its tests and closes after them (a database, a source):
 * `get` reads it inside tests and hooks (and throws if read before the beforeAll ran); `current` is it or
 * undefined, for an early close.
 */
export function useFileResource<T extends { close(): Promise<unknown> }>(
  name: string, open: () => Promise<T>,
): { get(): T; current(): T | undefined } {
  let value: T | undefined;
  beforeAll(async () => {
    value = await open();
  });
  afterAll(async () => {
    await value?.close();
  });
  return {
    get() {
      if (!value) throw new Error(`${name}: read before the file's beforeAll ran`);
      return value;
    },
    current: () => value,
  };
}

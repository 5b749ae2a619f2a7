import { ServiceUnavailableError } from './errors.js';

// A client-side bound on one database round trip. The server's statement_timeout cannot bound a
// statement that never reaches a server: behind a transaction pooler that drops the startup parameters,
// a statement sent outside a transaction can lose its replies (the pooler unlinks the server mid-way)
// and wait for ever. State reads and start-up checks go through this so that start-up and the background
// loops always move on.

/** `work`, or a ServiceUnavailableError once `ms` have passed without it settling. */
export function within<T>(work: PromiseLike<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ServiceUnavailableError(`${what}: no answer within ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([Promise.resolve(work), expired]).finally(() => clearTimeout(timer));
}

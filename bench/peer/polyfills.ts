// PostGraphile 5 declares Node ≥ 22; on Node 20 the one missing built-in it calls is Promise.withResolvers
// (ES2024: grafast, grafserv and @dataplan/pg create their deferreds with it). Installed before PostGraphile is
// loaded, only in the peer's process.
export function installPolyfills(): void {
  const P = Promise as PromiseConstructor & { withResolvers?: unknown };
  if (typeof P.withResolvers === 'function') return;
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value: function withResolvers<T>(this: PromiseConstructor) {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

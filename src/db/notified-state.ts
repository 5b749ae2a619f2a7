// Reads of state that a NOTIFY says has changed (the data version, the API keys): callers during a read share
// it, and a call during a read asks for one more after it, since the running read may predate the commit
// that notified. `readOnce` never throws (it keeps the last good state and reports its own errors).

export function coalescedReads<V>(readOnce: (via: V) => Promise<void>, stopped: () => boolean) {
  let inflight: Promise<void> | null = null;
  let again = false;
  return {
    /** Reads now, or joins the read in flight and has it read once more when it ends. */
    read(via: V): Promise<void> {
      if (inflight) {
        again = true;
        return inflight;
      }
      inflight = (async () => {
        do {
          again = false;
          await readOnce(via);
        } while (again && !stopped());
      })().finally(() => {
        inflight = null;
      });
      return inflight;
    },
    /** Resolves once no read is in flight. */
    settled: async (): Promise<void> => {
      await inflight?.catch(() => {});
    },
  };
}

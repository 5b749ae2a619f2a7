import { within } from './deadline.js';

// State kept in memory and refreshed when a NOTIFY says it changed (the data version, the API keys), with a
// poll in case a notification is lost. Its owner decides what a read does and in which order it starts.

export type ReadVia = 'start' | 'notify' | 'poll';

export interface Listener {
  unlisten(): Promise<void>;
}

export interface NotifiedStateOptions {
  /** Reads the state once; never throws (it keeps the last good state and reports its own errors). */
  readOnce(via: ReadVia): Promise<void>;
  /** Fallback poll interval (ms): the bound on staleness when notifications are lost. */
  pollMs: number;
  /** Client-side bound on establishing LISTEN (ms, src/db/deadline.ts). */
  listenTimeoutMs: number;
  /** Names the LISTEN in the error of a timed-out one. */
  listenLabel: string;
  onListenError(error: unknown): void;
}

export interface NotifiedState {
  /**
   * Reads now, or joins the read in flight and has it read once more when it ends: the running read may
   * predate the commit that notified.
   */
  read(via: ReadVia): Promise<void>;
  /** Sets up LISTEN; resolves within the bound, a failure reported. Established late it is still kept (dropped if stopped). */
  listen(establish: () => Promise<Listener>): Promise<void>;
  /** Starts the fallback poll (not once stopped). */
  poll(): void;
  /** True once LISTEN is established. */
  listening(): boolean;
  stop(): Promise<void>;
}

export function createNotifiedState(options: NotifiedStateOptions): NotifiedState {
  let inflight: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  let listener: Listener | null = null;
  let timer: NodeJS.Timeout | undefined;

  const read = (via: ReadVia): Promise<void> => {
    if (inflight) {
      again = true;
      return inflight;
    }
    inflight = (async () => {
      do {
        again = false;
        await options.readOnce(via);
      } while (again && !stopped);
    })().finally(() => {
      inflight = null;
    });
    return inflight;
  };

  return {
    read,
    async listen(establish) {
      try {
        const listening = establish().then((established) => {
          if (stopped) void established.unlisten().catch(() => {});
          else listener = established;
        });
        await within(listening, options.listenTimeoutMs, options.listenLabel);
      } catch (error) {
        options.onListenError(error);
      }
    },
    poll() {
      if (stopped) return;
      timer = setInterval(() => void read('poll'), options.pollMs);
      timer.unref();
    },
    listening: () => listener !== null,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await listener?.unlisten().catch(() => {});
      listener = null;
      await inflight?.catch(() => {});
    },
  };
}

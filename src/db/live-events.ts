import type { Sql } from './client.js';

// The live-event channel of sql/010_live_events.sql: its triggers NOTIFY it with ids only (a block's chain
// and height, chunks of movement ids); src/live loads the rows through the store.

const liveChannel = 'igw_live';

export type LiveListener = { unlisten(): Promise<void> };

/** Where notifications are received: a postgres.js client (its one LISTEN connection), or the embedded engine. */
export interface NotificationSource {
  listen(channel: string, onPayload: (payload: string) => void): PromiseLike<LiveListener>;
}

/** LISTENs on the live-event channel. */
export async function listenLiveEvents(source: Sql | NotificationSource, onPayload: (payload: string) => void): Promise<LiveListener> {
  return source.listen(liveChannel, onPayload);
}

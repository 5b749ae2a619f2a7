import type { Sql } from './client.js';

// The live-event channel of sql/010_live_events.sql: its triggers NOTIFY it with ids only (a block's chain
// and height, chunks of movement ids); src/live loads the rows through the store.

const liveChannel = 'igw_live';

export type LiveListener = { unlisten(): Promise<void> };

/** LISTENs on the live-event channel (on the client's one LISTEN connection). */
export function listenLiveEvents(sql: Sql, onPayload: (payload: string) => void): Promise<LiveListener> {
  return sql.listen(liveChannel, onPayload);
}

-- The sync's backfill copies balance_txn here first (src/sync/backfill.ts), then moves it into
-- balance_history in one INSERT … SELECT that writes each row once with its block height (its
-- transaction's, from the transactions copied before it: one hash join instead of a look-up per row in the
-- source) and its valid_to (the height of the holder's next row). Copying straight into balance_history and
-- linking afterwards rewrote nearly every row (an UPDATE: a second version of each row, twice the heap for
-- the index builds to read).
-- UNLOGGED: the rows are written once more from here, so they need no WAL; a crash empties the table, and
-- the backfill then copies balance_txn again from its start (it compares the rows here with rows_copied).
CREATE UNLOGGED TABLE sync_history_stage (
  id           bigint NOT NULL,
  tick_id      bigint NOT NULL,
  address      text NOT NULL,
  -- as in transactions (lower case): with tx_hash, the row's transaction
  chain        text NOT NULL,
  amount       numeric NOT NULL,
  balance      numeric NOT NULL,
  available    numeric NOT NULL,
  event        smallint NOT NULL,
  tx_hash      text NOT NULL,
  created_at   timestamptz NOT NULL
);

-- State of the sync from an indexer's MySQL database (src/sync): which source this read model copies,
-- how far the backfill got and where the follow resumes. Every row here is written in the same
-- transaction as the data it describes, so a crash never leaves the position ahead of (or behind) the data.

-- One row: the source's identity (a read model holds one index; another source is refused) and the
-- position the follow resumes from. binlog_* is the position after the last applied source transaction.
CREATE TABLE sync_source (
  id              boolean PRIMARY KEY DEFAULT true CHECK (id),
  server_uuid     text NOT NULL,
  source_database text NOT NULL,
  mode            text CHECK (mode IN ('binlog', 'polling')),
  binlog_file     text,
  binlog_pos      bigint,
  gtid            text,
  backfill_done   boolean NOT NULL DEFAULT false,
  -- the source's commit time of the last applied transaction (binlog) or poll start (polling)
  source_time     timestamptz,
  applied_at      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- Backfill progress per source table: rows with id <= last_id are copied (COPY of a range and the update
-- of last_id commit together). max_id is the snapshot's highest id, fixed when the backfill starts.
CREATE TABLE sync_backfill (
  source_table text PRIMARY KEY,
  last_id      numeric NOT NULL DEFAULT 0,
  max_id       numeric NOT NULL,
  rows_copied  bigint NOT NULL DEFAULT 0,
  done         boolean NOT NULL DEFAULT false
);

-- Indexes dropped for the backfill (rebuilt once it ends, or on the run that resumes it).
CREATE TABLE sync_dropped_indexes (
  name       text PRIMARY KEY,
  table_name text NOT NULL,
  def        text NOT NULL,
  constraint_kind text
);

-- Polling: the highest id seen per insert-only table, the ids below it not seen yet (a row committed
-- late, or a rolled-back insert), each with the time it was first missed, and the start of the next
-- updated_at window for the tables updated in place.
CREATE TABLE sync_poll_state (
  source_table text PRIMARY KEY,
  high_id      numeric NOT NULL DEFAULT 0,
  gaps         jsonb NOT NULL DEFAULT '{}'::jsonb,
  window_from  timestamp
);

-- Source ticks sharing a (chain, deploy_hash): the read model keeps both, a look-up by deploy hash
-- answers the first (lowest id). Reported by the sync and kept here for operators.
CREATE TABLE sync_duplicate_deploy_hashes (
  chain       text NOT NULL,
  deploy_hash text NOT NULL,
  tick_id     bigint NOT NULL,
  first_id    bigint NOT NULL,
  seen_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (chain, tick_id)
);
DROP INDEX ticks_by_deploy_hash;
CREATE INDEX ticks_by_deploy_hash ON ticks (chain, deploy_hash_key, id);

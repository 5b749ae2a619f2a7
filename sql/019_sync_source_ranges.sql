-- Issue 25 (D1, D2): the read model holds every value the indexer's schema allows, and remembers the
-- source's case-only duplicate ticks.
--
-- txs.position_in_block is `bigint unsigned` in the indexer's schema: an integer column refused
-- 3000000000 (the backfill's COPY failed). bigint holds every position a block can have (ids and heights
-- are bigint already; a value above 2^63 - 1 is a bad row, named by the sync).
ALTER TABLE transactions ALTER COLUMN position_in_block TYPE bigint;

-- The indexer lower-cases every tick it parses (protocol/metadata.go ParseEVMMetaData, asc20's exchange):
-- to it `zebra` and `ZEBRA` are one tick, and it never writes a second inscription that differs only in
-- case. The source's key is binary-collated, so a hand edit can: the sync keeps the first (lowest id) as
-- the tick, reports the later one as a bad row, and with --skip-bad-rows records it here so that the rows
-- spelled exactly like it (its balances, movements, history, utxos) are reported and skipped too instead of
-- being mixed into the first tick's.
CREATE TABLE sync_shadowed_ticks (
  id        bigint PRIMARY KEY,  -- the skipped inscription's source id
  chain     text NOT NULL,       -- as the source spells them
  protocol  text NOT NULL,
  tick      text NOT NULL,
  first_id  bigint NOT NULL      -- the tick it duplicates
);

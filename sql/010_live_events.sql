-- Live events (GraphQL subscriptions, src/live): NOTIFY igw_live with ids only, the gateway loads the rows.
-- Statement-level triggers with transition tables: one notification per statement, not per row, and
-- NOTIFY is delivered at commit (a rolled-back write notifies nobody). Payloads stay far below
-- PostgreSQL's 8000-byte limit: movement ids go out in chunks of 200 (at most ~4 KB of digits).
-- The triggers are ordinary (ENABLE, not ENABLE ALWAYS): bulk loads running with
-- session_replication_role = replica (the sync's backfill, loadDataset, the seed) send no storm.
--
-- Payloads (JSON):
--   {"b":"<chain>","h":"<height>"}   the chain's indexed height moved (indexed_blocks inserted/updated)
--   {"m":["<id>",…]}                new movements (address_txs rows)

CREATE FUNCTION live_notify_blocks() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN SELECT n.chain, n.block_number FROM new_rows n LOOP
    PERFORM pg_notify('igw_live', json_build_object('b', r.chain, 'h', r.block_number::text)::text);
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER live_blocks_insert AFTER INSERT ON indexed_blocks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_notify_blocks();
CREATE TRIGGER live_blocks_update AFTER UPDATE ON indexed_blocks
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_notify_blocks();

CREATE FUNCTION live_notify_movements() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  chunk text[];
BEGIN
  FOR chunk IN
    SELECT array_agg(id::text ORDER BY id) FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1) / 200 AS part FROM new_rows) s
     GROUP BY part ORDER BY part
  LOOP
    PERFORM pg_notify('igw_live', json_build_object('m', chunk)::text);
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER live_movements_insert AFTER INSERT ON address_txs
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION live_notify_movements();

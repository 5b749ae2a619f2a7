-- The data version: one number that changes whenever the indexer (or any writer) changes what the
-- gateway serves. Response caches key their entries on it, so a write makes every older entry
-- unreachable at once; nothing has to be found and deleted.
--
-- Why a row and not a sequence: the row is updated inside the writer's transaction, so readers see the
-- new version only once the data it stands for is committed. A sequence advances before the commit and
-- a reader could cache pre-commit data under the new version. The price: concurrent writer transactions
-- touching the tracked tables queue on this row (an indexer writes from one transaction at a time).
--
-- Gateways learn of a change through NOTIFY igw_data_version (delivered at commit, payload = the new
-- version) and, as a fallback, by polling the row.

-- `epoch` names this database: caches key on epoch and version together, so two databases (two test
-- databases, staging and production) sharing one Redis never share entries. The version starts at the
-- creation time in ms rather than 1, which keeps the numbers readable as "how recent". After restoring a
-- backup (the version goes back), give the database a new epoch:
--   UPDATE data_version SET epoch = substr(md5(gen_random_uuid()::text), 1, 12);
CREATE TABLE data_version (
  id      boolean PRIMARY KEY DEFAULT true CHECK (id),
  epoch   text NOT NULL DEFAULT substr(md5(gen_random_uuid()::text), 1, 12),
  version bigint NOT NULL
);
INSERT INTO data_version (id, version) VALUES (true, (extract(epoch FROM clock_timestamp()) * 1000)::bigint);

-- Once per transaction: the first tracked statement bumps and notifies, later ones (the indexer's other
-- rows, the counter triggers' cascaded updates) find the transaction-local flag set and do nothing. The
-- flag is a transaction-local setting, so it also reverts with a rolled-back savepoint, like the bump.
CREATE FUNCTION bump_data_version() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v bigint;
BEGIN
  IF current_setting('igw.data_version_bumped', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM set_config('igw.data_version_bumped', 'on', true);
  UPDATE data_version SET version = version + 1 WHERE id RETURNING version INTO v;
  PERFORM pg_notify('igw_data_version', v::text);
  RETURN NULL;
END $$;

-- Attaches the bump to a table: a statement-level trigger (a bulk insert of 5 000 rows fires once), and
-- ENABLE ALWAYS so that loaders running with session_replication_role = replica (the seed, fixtures,
-- bulk imports) still bump it. Later migrations call it for any new table the indexer writes.
CREATE FUNCTION track_data_version(tbl regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TRIGGER data_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON %s
                    FOR EACH STATEMENT EXECUTE FUNCTION bump_data_version()', tbl);
  EXECUTE format('ALTER TABLE %s ENABLE ALWAYS TRIGGER data_version_bump', tbl);
END $$;

SELECT track_data_version('chains');
SELECT track_data_version('indexed_blocks');
SELECT track_data_version('ticks');
SELECT track_data_version('balances');
SELECT track_data_version('address_txs');
SELECT track_data_version('transactions');

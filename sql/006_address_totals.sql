-- inds_getTransactions filtered by an address alone: its total is the number of transactions the
-- address sent or received (one sent to itself counts once). Counting them at read time is bounded by
-- the address's activity, but that is 50,000 index entries for the busiest address at scale 1 (~100 ms),
-- so the count is maintained here like list_totals (sql/002): row triggers for an indexer's writes,
-- refresh_counters() after a bulk load. With chain, protocol or tick also set, the gateway still counts
-- (bounded by the address's activity).
CREATE TABLE address_tx_totals (
  address_key text PRIMARY KEY, -- lower(address), as transactions.from_key / to_key
  n           bigint NOT NULL
);

CREATE FUNCTION bump_address_tx_total(p_key text, p_delta bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO address_tx_totals AS a (address_key, n) VALUES (p_key, p_delta)
  ON CONFLICT (address_key) DO UPDATE SET n = a.n + EXCLUDED.n
$$;

CREATE FUNCTION transactions_address_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM bump_address_tx_total(OLD.from_key, -1);
    IF OLD.to_key <> OLD.from_key THEN PERFORM bump_address_tx_total(OLD.to_key, -1); END IF;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM bump_address_tx_total(NEW.from_key, 1);
    IF NEW.to_key <> NEW.from_key THEN PERFORM bump_address_tx_total(NEW.to_key, 1); END IF;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER transactions_address_totals AFTER INSERT OR DELETE OR UPDATE OF from_address, to_address ON transactions
  FOR EACH ROW EXECUTE FUNCTION transactions_address_totals();

-- refresh_counters() (sql/002) recomputes this counter too: its body becomes one of the functions it
-- calls, beside one per counter added since
CREATE FUNCTION refresh_address_tx_totals() RETURNS void LANGUAGE sql AS $$
  DELETE FROM address_tx_totals;
  INSERT INTO address_tx_totals (address_key, n)
  SELECT k, count(*) FROM (SELECT from_key AS k FROM transactions
                           UNION ALL SELECT to_key FROM transactions WHERE to_key <> from_key) s
   GROUP BY k;
$$;
ALTER FUNCTION refresh_counters() RENAME TO refresh_tick_and_list_counters;
CREATE FUNCTION refresh_counters() RETURNS void LANGUAGE sql AS $$
  SELECT refresh_tick_and_list_counters();
  SELECT refresh_address_tx_totals();
$$;

-- the rows already there (a read model migrated in place)
SELECT refresh_address_tx_totals();

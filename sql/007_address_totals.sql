-- Totals of the two per-address lists whose count grows with an address's activity:
--   movements = address_txs rows of the address     (inds_getTransactionByAddress without a filter)
--   balances  = balances > 0 of the address          (inds_getBalancesByAddress without a filter)
-- Counted at read time they are bounded by the address's activity, but the busiest address of the scale-1
-- data set has 50,000 movements and 10,000 positive balances (gateway p99 39 and 28.5 ms at c=8); kept
-- here like address_tx_totals (sql/006): row triggers for an indexer's writes, refresh_counters() after a
-- bulk load. With a chain, protocol, tick, search or event filter the gateway still counts over
-- address_txs_by_address(_event|_tick) / balances_of_address.
CREATE TABLE address_totals (
  address_key text PRIMARY KEY, -- lower(address), as address_txs.address_key and balances.address_key
  movements   bigint NOT NULL DEFAULT 0,
  balances    bigint NOT NULL DEFAULT 0
);

CREATE FUNCTION bump_address_total(p_key text, p_movements bigint, p_balances bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO address_totals AS a (address_key, movements, balances) VALUES (p_key, p_movements, p_balances)
  ON CONFLICT (address_key) DO UPDATE SET movements = a.movements + EXCLUDED.movements, balances = a.balances + EXCLUDED.balances
$$;

CREATE FUNCTION address_txs_address_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM bump_address_total(OLD.address_key, -1, 0); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN PERFORM bump_address_total(NEW.address_key, 1, 0); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER address_txs_address_totals AFTER INSERT OR DELETE OR UPDATE OF address ON address_txs
  FOR EACH ROW EXECUTE FUNCTION address_txs_address_totals();

CREATE FUNCTION balances_address_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- most balance updates change an amount, not whether it is positive: nothing to count
  IF TG_OP = 'UPDATE' AND OLD.address_key = NEW.address_key AND (OLD.balance > 0) = (NEW.balance > 0) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.balance > 0 THEN PERFORM bump_address_total(OLD.address_key, 0, -1); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.balance > 0 THEN PERFORM bump_address_total(NEW.address_key, 0, 1); END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER balances_address_totals AFTER INSERT OR DELETE OR UPDATE OF address, balance ON balances
  FOR EACH ROW EXECUTE FUNCTION balances_address_totals();

-- refresh_counters() (sql/002, sql/006) recomputes these counters too
CREATE FUNCTION refresh_address_totals() RETURNS void LANGUAGE sql AS $$
  DELETE FROM address_totals;
  INSERT INTO address_totals (address_key, movements, balances)
  SELECT address_key, sum(movements), sum(balances)
    FROM (SELECT address_key, count(*) AS movements, 0 AS balances FROM address_txs GROUP BY address_key
          UNION ALL
          SELECT address_key, 0, count(*) FROM balances WHERE balance > 0 GROUP BY address_key) s
   GROUP BY address_key;
$$;
CREATE OR REPLACE FUNCTION refresh_counters() RETURNS void LANGUAGE sql AS $$
  SELECT refresh_tick_and_list_counters();
  SELECT refresh_address_tx_totals();
  SELECT refresh_address_totals();
$$;

-- the rows already there (a read model migrated in place)
SELECT refresh_address_totals();

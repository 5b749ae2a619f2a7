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

-- the rows already there (a read model migrated in place)
INSERT INTO address_totals (address_key, movements, balances)
SELECT address_key, sum(movements), sum(balances)
  FROM (SELECT address_key, count(*) AS movements, 0 AS balances FROM address_txs GROUP BY address_key
        UNION ALL
        SELECT address_key, 0, count(*) FROM balances WHERE balance > 0 GROUP BY address_key) s
 GROUP BY address_key;

-- refresh_counters() (sql/002, sql/006) recomputes these counters too
CREATE OR REPLACE FUNCTION refresh_counters() RETURNS void LANGUAGE sql AS $$
  WITH m AS (SELECT tick_id, sum(amount) AS s FROM address_txs WHERE event = 2 GROUP BY tick_id),
       h AS (SELECT tick_id, count(*) AS n FROM balances WHERE balance > 0 GROUP BY tick_id),
       x AS (SELECT chain, protocol, tick, count(*) AS n FROM transactions WHERE tick <> ''
             GROUP BY chain, protocol, tick)
  UPDATE ticks t
     SET minted = coalesce(m.s, 0), holders = coalesce(h.n, 0), tx_cnt = coalesce(x.n, 0)
    FROM ticks t2
    LEFT JOIN m ON m.tick_id = t2.id
    LEFT JOIN h ON h.tick_id = t2.id
    LEFT JOIN x ON x.chain = t2.chain AND x.protocol = t2.protocol AND x.tick = t2.tick
   WHERE t.id = t2.id;
  DELETE FROM list_totals;
  INSERT INTO list_totals (list, chain, protocol, tick, n)
  SELECT 'ticks', chain, protocol, NULL, count(*) FROM ticks GROUP BY CUBE (chain, protocol);
  INSERT INTO list_totals (list, chain, protocol, tick, n)
  SELECT 'transactions', chain, protocol, tick, coalesce(sum(n), 0) -- the grand total row exists even when empty
    FROM (SELECT chain, protocol, tick, count(*) AS n FROM transactions GROUP BY chain, protocol, tick) g
   GROUP BY CUBE (chain, protocol, tick);
  DELETE FROM address_tx_totals;
  INSERT INTO address_tx_totals (address_key, n)
  SELECT k, count(*) FROM (SELECT from_key AS k FROM transactions
                           UNION ALL SELECT to_key FROM transactions WHERE to_key <> from_key) s
   GROUP BY k;
  DELETE FROM address_totals;
  INSERT INTO address_totals (address_key, movements, balances)
  SELECT address_key, sum(movements), sum(balances)
    FROM (SELECT address_key, count(*) AS movements, 0 AS balances FROM address_txs GROUP BY address_key
          UNION ALL
          SELECT address_key, 0, count(*) FROM balances WHERE balance > 0 GROUP BY address_key) s
   GROUP BY address_key;
$$;

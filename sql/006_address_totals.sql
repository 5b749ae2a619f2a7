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

-- the rows already there (a read model migrated in place)
INSERT INTO address_tx_totals (address_key, n)
SELECT k, count(*) FROM (SELECT from_key AS k FROM transactions
                         UNION ALL SELECT to_key FROM transactions WHERE to_key <> from_key) s
 GROUP BY k;

-- refresh_counters() (sql/002) recomputes this counter too
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
$$;

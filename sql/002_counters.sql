-- Counters are maintained in the database, so every writer (the indexer, the seed, a repair script)
-- keeps them right without knowing about them:
--   ticks.minted   = sum of the tick's mint movements (address_txs.event = 2)
--   ticks.holders  = number of balances of the tick that are > 0
--   ticks.tx_cnt   = number of raw transactions of the tick (same chain, protocol, tick)
--   list_totals    = row counts of ticks and transactions per (chain, protocol[, tick]) and NULL = any
-- Row triggers keep them current for an indexer's incremental writes. Bulk loaders may disable triggers
-- (SET LOCAL session_replication_role = replica) and call refresh_counters() once at the end.

CREATE FUNCTION bump_list_total(p_list text, p_chain text, p_protocol text, p_tick text, p_delta bigint)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO list_totals AS lt (list, chain, protocol, tick, n)
  SELECT DISTINCT p_list, c.v, p.v, t.v, p_delta
  FROM (VALUES (p_chain), (NULL::text)) AS c (v),
       (VALUES (p_protocol), (NULL::text)) AS p (v),
       (VALUES (p_tick), (NULL::text)) AS t (v)
  ON CONFLICT ON CONSTRAINT list_totals_key DO UPDATE SET n = lt.n + EXCLUDED.n
$$;

CREATE FUNCTION ticks_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM bump_list_total('ticks', OLD.chain, OLD.protocol, NULL, -1);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM bump_list_total('ticks', NEW.chain, NEW.protocol, NULL, 1);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER ticks_counters AFTER INSERT OR DELETE OR UPDATE OF chain, protocol ON ticks
  FOR EACH ROW EXECUTE FUNCTION ticks_counters();

-- A tick may be written after its first transactions (an indexer that records the deploy transaction
-- first), or re-keyed: its tx_cnt is then recounted from the transactions already there.
CREATE FUNCTION ticks_tx_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.tx_cnt := (SELECT count(*) FROM transactions
                  WHERE chain = NEW.chain AND protocol = NEW.protocol AND tick = NEW.tick);
  RETURN NEW;
END $$;
CREATE TRIGGER ticks_tx_count BEFORE INSERT OR UPDATE OF chain, protocol, tick ON ticks
  FOR EACH ROW EXECUTE FUNCTION ticks_tx_count();

CREATE FUNCTION transactions_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM bump_list_total('transactions', OLD.chain, OLD.protocol, OLD.tick, -1);
    UPDATE ticks SET tx_cnt = tx_cnt - 1
     WHERE chain = OLD.chain AND protocol = OLD.protocol AND tick = OLD.tick;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM bump_list_total('transactions', NEW.chain, NEW.protocol, NEW.tick, 1);
    UPDATE ticks SET tx_cnt = tx_cnt + 1
     WHERE chain = NEW.chain AND protocol = NEW.protocol AND tick = NEW.tick;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER transactions_counters AFTER INSERT OR DELETE OR UPDATE OF chain, protocol, tick ON transactions
  FOR EACH ROW EXECUTE FUNCTION transactions_counters();

CREATE FUNCTION balances_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.balance > 0 THEN
    UPDATE ticks SET holders = holders - 1 WHERE id = OLD.tick_id;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.balance > 0 THEN
    UPDATE ticks SET holders = holders + 1 WHERE id = NEW.tick_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER balances_counters AFTER INSERT OR DELETE OR UPDATE OF tick_id, balance ON balances
  FOR EACH ROW EXECUTE FUNCTION balances_counters();

CREATE FUNCTION address_txs_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.event = 2 THEN
    UPDATE ticks SET minted = minted - OLD.amount WHERE id = OLD.tick_id;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.event = 2 THEN
    UPDATE ticks SET minted = minted + NEW.amount WHERE id = NEW.tick_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER address_txs_counters AFTER INSERT OR DELETE OR UPDATE OF tick_id, amount, event ON address_txs
  FOR EACH ROW EXECUTE FUNCTION address_txs_counters();

-- Recompute every counter from the rows (after a bulk load with triggers off, or as a repair).
CREATE FUNCTION refresh_counters() RETURNS void LANGUAGE sql AS $$
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
$$;

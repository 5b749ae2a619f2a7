-- The sync (src/sync) writes an indexer flush as a few multi-row statements, most rows of one tick. The
-- counter row triggers of 002 then update that tick's row once per written row: hundreds of versions of
-- one ticks row in one transaction, each with an entry in every index of ticks, and each update walking
-- the versions before it — quadratic, and the sync's follow fell behind 5,000 rows/s. A writer that adds
-- the counters' changes itself, once per tick and statement, sets igw.counters = 'batched' for its statement
-- (SET LOCAL); the row triggers then leave the counters to it. Every other writer is unchanged.
CREATE OR REPLACE FUNCTION transactions_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('igw.counters', true) = 'batched' THEN RETURN NULL; END IF;
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

CREATE OR REPLACE FUNCTION balances_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('igw.counters', true) = 'batched' THEN RETURN NULL; END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.balance > 0 THEN
    UPDATE ticks SET holders = holders - 1 WHERE id = OLD.tick_id;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.balance > 0 THEN
    UPDATE ticks SET holders = holders + 1 WHERE id = NEW.tick_id;
  END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION address_txs_counters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('igw.counters', true) = 'batched' THEN RETURN NULL; END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.event = 2 THEN
    UPDATE ticks SET minted = minted - OLD.amount WHERE id = OLD.tick_id;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.event = 2 THEN
    UPDATE ticks SET minted = minted + NEW.amount WHERE id = NEW.tick_id;
  END IF;
  RETURN NULL;
END $$;

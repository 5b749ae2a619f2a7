-- The per-address totals of 006 and 007 were still kept by row triggers for the sync's multi-row writes:
-- one upsert of address_tx_totals / address_totals per written row (the largest share of the sync's apply
-- at 5,000 rows/s). As 009 does for the tick counters, a writer that sets igw.counters = 'batched' for its
-- statement adds these totals' changes itself, once per address and statement; every other writer is unchanged.
CREATE OR REPLACE FUNCTION transactions_address_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('igw.counters', true) = 'batched' THEN RETURN NULL; END IF;
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

CREATE OR REPLACE FUNCTION address_txs_address_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('igw.counters', true) = 'batched' THEN RETURN NULL; END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM bump_address_total(OLD.address_key, -1, 0); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN PERFORM bump_address_total(NEW.address_key, 1, 0); END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION balances_address_totals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('igw.counters', true) = 'batched' THEN RETURN NULL; END IF;
  -- most balance updates change an amount, not whether it is positive: nothing to count
  IF TG_OP = 'UPDATE' AND OLD.address_key = NEW.address_key AND (OLD.balance > 0) = (NEW.balance > 0) THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.balance > 0 THEN PERFORM bump_address_total(OLD.address_key, 0, -1); END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.balance > 0 THEN PERFORM bump_address_total(NEW.address_key, 0, 1); END IF;
  RETURN NULL;
END $$;

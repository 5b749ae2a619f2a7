-- refresh_counters() in its two parts, so that a bulk loader can run them at different moments: the
-- counters (whole-table aggregates, small writes) and the history's intervals (link_balance_history():
-- a rewrite of nearly every balance_history row after a load that wrote no valid_to). The sync's backfill
-- links while the history has no secondary index (a row rewritten costs an entry in each index there is)
-- and refreshes the counters at the end, in the transaction that marks it done. refresh_counters() is
-- unchanged for every other caller: both parts.
CREATE FUNCTION refresh_counter_tables() RETURNS void LANGUAGE sql AS $$
  SELECT refresh_tick_and_list_counters();
  SELECT refresh_address_tx_totals();
  SELECT refresh_address_totals();
$$;

CREATE OR REPLACE FUNCTION refresh_counters() RETURNS void LANGUAGE sql AS $$
  SELECT refresh_counter_tables();
  SELECT link_balance_history();
$$;

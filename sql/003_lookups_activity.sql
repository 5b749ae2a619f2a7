-- Indexes for the rest of the v2 surface: look-ups by tick-name prefix (inds_search) and time windows
-- of a chain's activity (inds_chainStat). Only indexes: nothing of 001/002 changes.

-- inds_search: tick-name prefixes as a byte-wise range scan. The range bounds are bound parameters, so
-- the plan is the same for every keyword (a LIKE 'x%' pattern would only use an index in a custom plan).
CREATE INDEX ticks_by_tick_prefix ON ticks ((tick COLLATE "C"), id);

-- inds_chainStat: the transactions of a chain in a time window (the last 24 h and the 24 h before, ending
-- at the newest indexed transaction of the chain).
CREATE INDEX transactions_chain_by_time ON transactions (chain, block_time);

-- The counter row triggers of 002, 006 and 007 stand aside for a statement that adds the counters'
-- changes itself (igw.counters = 'batched', sql/009 and sql/012) by returning at once — but an AFTER row
-- trigger that returns at once still costs, per written row, an event in the statement's after-trigger
-- queue, the row fetched again at the end of the statement and a PL/pgSQL call: six of them per row of a
-- sync flush (5,000 rows/s at the benchmark's rate). A WHEN clause is decided as the row is written, and
-- an event it rejects is never queued. Same triggers, same events otherwise; the functions keep their own
-- check (a caller that fires them some other way still gets the right answer).
DROP TRIGGER transactions_counters ON transactions;
CREATE TRIGGER transactions_counters AFTER INSERT OR DELETE OR UPDATE OF chain, protocol, tick ON transactions
  FOR EACH ROW WHEN (current_setting('igw.counters', true) IS DISTINCT FROM 'batched')
  EXECUTE FUNCTION transactions_counters();

DROP TRIGGER balances_counters ON balances;
CREATE TRIGGER balances_counters AFTER INSERT OR DELETE OR UPDATE OF tick_id, balance ON balances
  FOR EACH ROW WHEN (current_setting('igw.counters', true) IS DISTINCT FROM 'batched')
  EXECUTE FUNCTION balances_counters();

DROP TRIGGER address_txs_counters ON address_txs;
CREATE TRIGGER address_txs_counters AFTER INSERT OR DELETE OR UPDATE OF tick_id, amount, event ON address_txs
  FOR EACH ROW WHEN (current_setting('igw.counters', true) IS DISTINCT FROM 'batched')
  EXECUTE FUNCTION address_txs_counters();

DROP TRIGGER transactions_address_totals ON transactions;
CREATE TRIGGER transactions_address_totals AFTER INSERT OR DELETE OR UPDATE OF from_address, to_address ON transactions
  FOR EACH ROW WHEN (current_setting('igw.counters', true) IS DISTINCT FROM 'batched')
  EXECUTE FUNCTION transactions_address_totals();

DROP TRIGGER address_txs_address_totals ON address_txs;
CREATE TRIGGER address_txs_address_totals AFTER INSERT OR DELETE OR UPDATE OF address ON address_txs
  FOR EACH ROW WHEN (current_setting('igw.counters', true) IS DISTINCT FROM 'batched')
  EXECUTE FUNCTION address_txs_address_totals();

DROP TRIGGER balances_address_totals ON balances;
CREATE TRIGGER balances_address_totals AFTER INSERT OR DELETE OR UPDATE OF address, balance ON balances
  FOR EACH ROW WHEN (current_setting('igw.counters', true) IS DISTINCT FROM 'batched')
  EXECUTE FUNCTION balances_address_totals();

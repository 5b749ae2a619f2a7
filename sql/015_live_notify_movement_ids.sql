-- The notification of new movements (sql/010) as a function of their ids, so that a writer whose
-- statement runs with the ordinary triggers off (the sync's follow writes its movements with
-- session_replication_role = replica: see src/db/sync-apply.ts) sends exactly what the trigger sends. The
-- trigger calls it too: one payload format. An empty array (or NULL) sends nothing.
CREATE FUNCTION live_notify_movement_ids(ids bigint[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  chunk text[];
BEGIN
  FOR chunk IN
    SELECT array_agg(id::text ORDER BY id) FROM (SELECT id, (row_number() OVER (ORDER BY id) - 1) / 200 AS part
                                                   FROM unnest(ids) AS u (id)) s
     GROUP BY part ORDER BY part
  LOOP
    PERFORM pg_notify('igw_live', json_build_object('m', chunk)::text);
  END LOOP;
END $$;

CREATE OR REPLACE FUNCTION live_notify_movements() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_notify_movement_ids(array_agg(id)) FROM new_rows;
  RETURN NULL;
END $$;

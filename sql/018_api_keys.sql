-- API keys (src/db/api-keys.ts, src/access/): who may call the gateway with how much. Written by the
-- operator's `npm run keys` on an admin connection; the gateway reads them with its read-only role and keeps
-- them in memory.
--
-- A key is `<prefix>_<secret>`: the prefix is public (it names the key in logs and finds its row), the
-- secret is 32 random bytes that only the client holds. Only the SHA-256 of the secret is stored: the
-- secret has 256 bits of entropy, so a fast hash is as good as a slow one here (nothing to guess from a
-- dictionary; a slow hash defends low-entropy passwords), and a lookup costs microseconds, not the
-- 50-100 ms of bcrypt/scrypt on every request.
--
-- Limits: `rate_per_s` and `burst` make a token bucket (a sustained rate and what may come at once);
-- `daily_allowance` caps admitted requests per UTC day (null: no cap). The overrides raise this key's page
-- size, operation cost limit and open subscription streams over the gateway's defaults (null: default).
--
-- Changes reach running gateways through NOTIFY igw_api_keys (delivered at commit; a statement-level
-- trigger, so a bulk change sends one notification); each gateway then reloads the table (a few rows per
-- partner: cheap). The table is not tracked by the data version: a key change must not invalidate the
-- response cache. The day's usage is not here: the gateway cannot write (see docs/api-keys.md).

CREATE TABLE api_keys (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- the operator's name for the key: a metric label, so a short plain word
  name            text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$'),
  prefix          text NOT NULL UNIQUE CHECK (prefix ~ '^igw[0-9a-f]{8}$'),
  secret_sha256   bytea NOT NULL CHECK (octet_length(secret_sha256) = 32),
  rate_per_s      double precision NOT NULL CHECK (rate_per_s > 0 AND rate_per_s <= 1000000),
  burst           integer NOT NULL CHECK (burst >= 1 AND burst <= 10000000),
  daily_allowance bigint CHECK (daily_allowance >= 1),
  expires_at      timestamptz,
  revoked_at      timestamptz,
  max_page_size   integer CHECK (max_page_size >= 1),
  max_cost        bigint CHECK (max_cost >= 1),
  max_streams     integer CHECK (max_streams >= 1),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION api_keys_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.updated_at := now();
  RETURN NEW;
END $$;
CREATE TRIGGER api_keys_touch BEFORE UPDATE ON api_keys FOR EACH ROW EXECUTE FUNCTION api_keys_touch();

-- ENABLE ALWAYS: a change made under session_replication_role = replica (a restore, a bulk import) still
-- reaches the gateways
CREATE FUNCTION api_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('igw_api_keys', '');
  RETURN NULL;
END $$;
CREATE TRIGGER api_keys_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION api_keys_notify();
ALTER TABLE api_keys ENABLE ALWAYS TRIGGER api_keys_notify;

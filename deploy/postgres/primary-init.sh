#!/bin/bash
# Runs once, when the primary's data directory is created (the official postgres image runs
# /docker-entrypoint-initdb.d/* then). Creates the three roles of the stack, the standby's replication
# slot, and lets the standby connect for streaming replication. Passwords come from the environment
# (deploy/compose.yaml, deploy/.env), never from this file.
#   igw_owner      owns the read model: migrations, the sync from the indexer, the demo seed (writes)
#   gateway_reader the gateways: SELECT only, read-only sessions (docs/limits-and-faults.md "The database role")
#   replicator     the standby's streaming replication
set -euo pipefail
: "${IGW_OWNER_PASSWORD:?}" "${GATEWAY_DB_PASSWORD:?}" "${REPLICATION_PASSWORD:?}"
db="${POSTGRES_DB:-igw}"

psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$db" \
  -v owner_pw="$IGW_OWNER_PASSWORD" -v reader_pw="$GATEWAY_DB_PASSWORD" -v repl_pw="$REPLICATION_PASSWORD" \
  -v db="$db" <<'SQL'
CREATE ROLE igw_owner LOGIN PASSWORD :'owner_pw';
CREATE ROLE gateway_reader LOGIN PASSWORD :'reader_pw';
CREATE ROLE replicator LOGIN REPLICATION PASSWORD :'repl_pw';

-- the owner creates the schema's objects; bulk loads (sync backfill, demo seed) switch row triggers off
-- with session_replication_role, which PostgreSQL 15+ lets a non-superuser set when granted
GRANT ALL ON DATABASE :"db" TO igw_owner;
GRANT ALL ON SCHEMA public TO igw_owner;
GRANT SET ON PARAMETER session_replication_role TO igw_owner;

-- the gateways read what the owner creates, now and later, and nothing else
GRANT CONNECT ON DATABASE :"db" TO gateway_reader;
GRANT USAGE ON SCHEMA public TO gateway_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE igw_owner IN SCHEMA public GRANT SELECT ON TABLES TO gateway_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE igw_owner IN SCHEMA public GRANT SELECT ON SEQUENCES TO gateway_reader;
-- enforced by the role too: behind a transaction pooler the session's startup settings do not reach the
-- server connection that runs a statement
ALTER ROLE gateway_reader SET default_transaction_read_only = on;
ALTER ROLE gateway_reader SET statement_timeout = '5s';

-- the standby streams from this slot: the primary keeps the WAL it has not received yet (bounded by
-- max_slot_wal_keep_size in compose.yaml)
SELECT pg_create_physical_replication_slot('standby_1');
SQL

# replication connections from the compose network (password-checked)
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"

#!/bin/bash
# Entrypoint of the streaming standby (official postgres image, run as the postgres user): on the first
# start it clones the primary with pg_basebackup (-R writes primary_conninfo and standby.signal), then it
# runs PostgreSQL as a hot standby that the gateways read from (DATABASE_READ_URLS, through PgBouncer).
# It listens on every interface of its container (STANDBY_LISTEN_ADDRESSES: `*`); outside a container
# (deploy/smoke/local-topology.sh) on loopback only.
set -euo pipefail
: "${PRIMARY_HOST:?}" "${REPLICATION_PASSWORD:?}"
PGDATA="${PGDATA:-/var/lib/postgresql/data}"
export PGPASSWORD="$REPLICATION_PASSWORD"

until pg_isready -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -q; do
  echo "standby: waiting for the primary at $PRIMARY_HOST"; sleep 1
done

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  echo "standby: cloning the primary into $PGDATA"
  rm -rf "${PGDATA:?}"/*
  pg_basebackup -h "$PRIMARY_HOST" -p "${PRIMARY_PORT:-5432}" -U replicator -D "$PGDATA" \
    -S standby_1 -X stream -R --checkpoint=fast --progress
fi
chmod 0700 "$PGDATA"
unset PGPASSWORD

exec postgres -D "$PGDATA" \
  -c hot_standby=on \
  -c max_connections="${STANDBY_MAX_CONNECTIONS:-200}" \
  -c max_wal_senders="${STANDBY_MAX_WAL_SENDERS:-10}" \
  -c hot_standby_feedback=on \
  -c max_standby_streaming_delay=30s \
  -c listen_addresses="${STANDBY_LISTEN_ADDRESSES:-*}"

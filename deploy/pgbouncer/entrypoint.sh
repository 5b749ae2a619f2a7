#!/bin/sh
# PgBouncer's entrypoint in deploy/compose.yaml: the auth file is written from the environment at start
# (the password stays out of the repository), then pgbouncer runs deploy/pgbouncer/pgbouncer.ini.
# The password is stored as is: PgBouncer needs it to log in to PostgreSQL with SCRAM.
set -eu
: "${PGBOUNCER_USER:?}" "${PGBOUNCER_PASSWORD:?}"
umask 077
mkdir -p /tmp/pgbouncer
printf '"%s" "%s"\n' "$PGBOUNCER_USER" "$PGBOUNCER_PASSWORD" > /tmp/pgbouncer/userlist.txt
exec pgbouncer /opt/igw/pgbouncer.ini

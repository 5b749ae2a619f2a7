#!/usr/bin/env bash
# The database half of deploy/compose.yaml without Docker, on this machine's PostgreSQL and PgBouncer
# binaries (run as root; needs the postgres user, initdb, pg_basebackup, pgbouncer; `npm run build` first):
#   - a primary initialised with deploy/postgres/primary-init.sh (the three roles, the slot, pg_hba),
#   - a standby cloned and started by deploy/postgres/standby-entrypoint.sh,
#   - PgBouncer on deploy/pgbouncer/pgbouncer.ini (compose host names rewritten to 127.0.0.1 ports),
#   - the migrations and the demo seed as the owner role, on the primary (as the compose services do),
#   - a gateway as gateway_reader reading the standby, and one through PgBouncer,
# then checks that the data reached the standby, that the reader cannot write, and that the gateways answer.
# and, when nginx is installed, puts three of those gateways behind deploy/nginx/nginx.conf.
#   bash deploy/smoke/local-topology.sh            (9 ports from SMOKE_PORT_BASE, default a random one in
#                                                  20000-59000, so runs side by side do not collide; everything under a temp dir)
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$PWD
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
work=$(mktemp -d /tmp/igw-topology.XXXXXX)
chown postgres: "$work"
# a base whose 8 ports nobody listens on (other test runs may hold some), below the kernel's ephemeral range:
# there any client socket (or a server on port 0) can hold a port between this check and the bind
port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
ephemeral_low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
slots=$(( (ephemeral_low - 20000 - 8) / 10 ))
[ "$slots" -gt 0 ] || slots=1
base=${SMOKE_PORT_BASE:-}
while [ -z "$base" ]; do
  base=$((20000 + (RANDOM % slots) * 10))
  for i in 0 1 2 3 4 5 6 7; do if port_taken $((base + i)); then base=; break; fi; done
done
P_PORT=$base S_PORT=$((base + 1)) B_PORT=$((base + 2)) G1_PORT=$((base + 3)) G2_PORT=$((base + 4)) G3_PORT=$((base + 5))
G4_PORT=$((base + 6)) LB_PORT=$((base + 7))
export POSTGRES_USER=postgres POSTGRES_DB=igw
export IGW_OWNER_PASSWORD=smoke-owner GATEWAY_DB_PASSWORD=smoke-reader REPLICATION_PASSWORD=smoke-replication
as_pg() { runuser -u postgres -- env PATH="$bin:$PATH" "$@"; }
pids=()
cleanup() {
  [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  as_pg pg_ctl -D "$work/standby" -m fast stop >/dev/null 2>&1 || true
  as_pg pg_ctl -D "$work/primary" -m fast stop >/dev/null 2>&1 || true
  sleep 1; rm -rf "$work"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }

step "primary: initdb, then the image's init steps (pg_hba for passwords, database, primary-init.sh)"
as_pg initdb -D "$work/primary" -U postgres --auth-local=trust --auth-host=scram-sha-256 >/dev/null
echo "host all all all scram-sha-256" >> "$work/primary/pg_hba.conf"
as_pg pg_ctl -D "$work/primary" -w -l "$work/primary.log" -o "-p $P_PORT -k $work -c wal_level=replica -c max_wal_senders=10 -c max_replication_slots=10 -c max_connections=200 -c listen_addresses=127.0.0.1" start >/dev/null \
  || { cat "$work/primary.log"; exit 1; }
as_pg psql -h "$work" -p $P_PORT -U postgres -qc "CREATE DATABASE igw" postgres
as_pg env PGHOST="$work" PGPORT=$P_PORT PGDATA="$work/primary" POSTGRES_USER=postgres POSTGRES_DB=igw \
  IGW_OWNER_PASSWORD="$IGW_OWNER_PASSWORD" GATEWAY_DB_PASSWORD="$GATEWAY_DB_PASSWORD" REPLICATION_PASSWORD="$REPLICATION_PASSWORD" \
  bash "$repo/deploy/postgres/primary-init.sh"
as_pg pg_ctl -D "$work/primary" -w reload >/dev/null

step "standby: standby-entrypoint.sh (pg_basebackup from the slot, then a hot standby)"
mkdir -p "$work/standby" && chown postgres: "$work/standby"
runuser -u postgres -- env PATH="$bin:$PATH" PGDATA="$work/standby" PGPORT=$S_PORT PRIMARY_HOST=127.0.0.1 PRIMARY_PORT=$P_PORT \
  REPLICATION_PASSWORD="$REPLICATION_PASSWORD" STANDBY_MAX_CONNECTIONS=200 STANDBY_LISTEN_ADDRESSES=127.0.0.1 \
  bash "$repo/deploy/postgres/standby-entrypoint.sh" >"$work/standby.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 60); do pg_isready -h 127.0.0.1 -p $S_PORT -q && break; sleep 0.5; done
in_recovery=$(PGPASSWORD="$GATEWAY_DB_PASSWORD" psql -h 127.0.0.1 -p $S_PORT -U gateway_reader -tAc "select pg_is_in_recovery()" igw)
echo "standby in recovery: $in_recovery"; [ "$in_recovery" = t ]

step "migrations and demo seed as igw_owner on the primary (dist/cli/migrate.js, dist/cli/seed.js)"
owner_url="postgres://igw_owner:$IGW_OWNER_PASSWORD@127.0.0.1:$P_PORT/igw"
DATABASE_URL="$owner_url" node dist/cli/migrate.js
DATABASE_URL="$owner_url" node dist/cli/seed.js

step "the reader: reads, cannot write; the standby has the data"
reader() { PGPASSWORD="$GATEWAY_DB_PASSWORD" psql -h 127.0.0.1 -p "$1" -U gateway_reader -v ON_ERROR_STOP=1 -tAc "$2" igw; }
primary_ticks=$(reader $P_PORT "select count(*) from ticks")
for _ in $(seq 1 40); do standby_ticks=$(reader $S_PORT "select count(*) from ticks" 2>/dev/null || echo 0); [ "$standby_ticks" = "$primary_ticks" ] && break; sleep 0.25; done
echo "ticks: primary $primary_ticks, standby $standby_ticks"; [ "$primary_ticks" -gt 0 ] && [ "$standby_ticks" = "$primary_ticks" ]
if reader $P_PORT "begin read write; delete from ticks; commit" >/dev/null 2>&1; then echo "the reader could write"; exit 1; fi
echo "reader write refused: ok"

step "PgBouncer on deploy/pgbouncer/pgbouncer.ini"
mkdir -p "$work/pgbouncer" && chown postgres: "$work/pgbouncer"
sed -e "s/host=postgres-primary port=5432/host=127.0.0.1 port=$P_PORT/" -e "s/host=postgres-standby port=5432/host=127.0.0.1 port=$S_PORT/" \
  -e "s/^listen_port = .*/listen_port = $B_PORT/" -e "s/^listen_addr = .*/listen_addr = 127.0.0.1/" -e "s#/tmp/pgbouncer/#$work/pgbouncer/#" \
  deploy/pgbouncer/pgbouncer.ini > "$work/pgbouncer.ini"
pgb_version=$(pgbouncer --version | head -n 1 | grep -oE '[0-9]+\.[0-9]+' | head -n 1)
pgb_prepared=yes
if [ "$(printf '%s\n1.21\n' "$pgb_version" | sort -V | head -n 1)" != 1.21 ]; then
  # compose runs 1.23; an older local one has no protocol-level prepared statements (1.21+)
  echo "pgbouncer $pgb_version < 1.21: max_prepared_statements dropped for this run"
  sed -i '/^max_prepared_statements/d' "$work/pgbouncer.ini"; pgb_prepared=no
fi
sed -e "s#/tmp/pgbouncer#$work/pgbouncer#g" -e "s#/opt/igw/pgbouncer.ini#$work/pgbouncer.ini#" deploy/pgbouncer/entrypoint.sh > "$work/pgbouncer-entrypoint.sh"
runuser -u postgres -- env PGBOUNCER_USER=gateway_reader PGBOUNCER_PASSWORD="$GATEWAY_DB_PASSWORD" sh "$work/pgbouncer-entrypoint.sh" >"$work/pgbouncer.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 20); do pg_isready -h 127.0.0.1 -p $B_PORT -q && break; sleep 0.25; done
pg_isready -h 127.0.0.1 -p $B_PORT -q || { cat "$work/pgbouncer.log"; exit 1; }
# every server of this script listens on loopback only (this is a shared machine, not a container network)
listeners=$(ss -Hltn | awk -v ports=" $P_PORT $S_PORT $B_PORT " '{ n = split($4, a, ":"); if (index(ports, " " a[n] " ")) print $4 }' | sort -u | tr '\n' ' ')
echo "listening: $listeners"
if grep -qvE '^(127\.0\.0\.1:[0-9]+ ?)+$' <<<"$listeners"; then echo "a server listens beyond loopback: $listeners"; exit 1; fi
via() { PGPASSWORD="$GATEWAY_DB_PASSWORD" psql -h 127.0.0.1 -p $B_PORT -U gateway_reader -v ON_ERROR_STOP=1 -tAc "$2" "$1"; }
to_primary=$(via igw "select pg_is_in_recovery(), count(*) from ticks")
to_standby=$(via igw_standby "select pg_is_in_recovery(), count(*) from ticks")
echo "pgbouncer/igw -> $to_primary (in recovery, ticks); pgbouncer/igw_standby -> $to_standby"
[ "$to_primary" = "f|$primary_ticks" ] && [ "$to_standby" = "t|$primary_ticks" ]
# the gateway's session settings are ignored as startup parameters by the pooler; its role carries them
settings=$(via igw "select current_setting('default_transaction_read_only') || ' ' || current_setting('statement_timeout')")
echo "role settings through the pooler: $settings"; [ "$settings" = "on 5s" ]

gateway() { # name port DATABASE_URL [extra env...]
  local name=$1 port=$2 url=$3; shift 3
  env -i PATH="$PATH" HOME="$HOME" HOST=127.0.0.1 PORT="$port" DATABASE_URL="$url" SEED=false LOG_FORMAT=json DATA_VERSION_LISTEN=false "$@" \
    node --max-old-space-size=256 dist/main.js >"$work/$name.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 120); do grep -qs 'ready in' "$work/$name.log" && break; sleep 0.25; done
  local ready chains
  ready=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)
  chains=$(curl -s "http://127.0.0.1:$port/v2/rpc" -H 'content-type: application/json' \
    -d '{"jsonrpc":"2.0","id":1,"method":"inds_getTicks","params":[3,0,"","","","",3,2]}' || true)
  [ "$ready" = 200 ] || tail -n 5 "$work/$name.log"
  echo "$name: /readyz $ready; inds_getTicks: ${chains:0:160}"
  [ "$ready" = 200 ] && grep -q '"total"' <<<"$chains"
}

step "a gateway as gateway_reader straight on the standby"
gateway standby-direct $G1_PORT "postgres://gateway_reader:$GATEWAY_DB_PASSWORD@127.0.0.1:$S_PORT/igw"

step "a gateway through PgBouncer (transaction mode) to the standby"
if [ "$pgb_prepared" = no ] && ! grep -q DB_POOLER dist/config.js; then
  echo "skipped: this PgBouncer keeps no prepared statements (< 1.21) and this build has no DB_POOLER (prepared statements off)"
elif gateway via-pgbouncer $G2_PORT "postgres://gateway_reader:$GATEWAY_DB_PASSWORD@127.0.0.1:$B_PORT/igw_standby" DB_POOLER=pgbouncer; then
  echo "through PgBouncer: ok"
else
  echo "through PgBouncer: FAILED (pgbouncer $(pgbouncer --version | head -n 1)); gateway log:"; tail -n 5 "$work/via-pgbouncer.log"
  exit 1
fi

step "nginx (deploy/nginx/nginx.conf) in front of three gateways"
if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
  echo "skipped: no nginx"
else
  reader_standby="postgres://gateway_reader:$GATEWAY_DB_PASSWORD@127.0.0.1:$S_PORT/igw"
  gateway lb-2 $G3_PORT "$reader_standby"
  gateway lb-3 $G4_PORT "$reader_standby"
  mkdir -p "$work/nginx"
  sed -e "s/server gateway-1:8080/server 127.0.0.1:$G1_PORT/" -e "s/server gateway-2:8080/server 127.0.0.1:$G3_PORT/" \
    -e "s/server gateway-3:8080/server 127.0.0.1:$G4_PORT/" -e "s/listen 8080;/listen 127.0.0.1:$LB_PORT;/" \
    -e "s#access_log /dev/stdout json;#access_log $work/nginx-access.log json;#" deploy/nginx/nginx.conf > "$work/nginx/nginx.conf"
  PATH="$PATH:/usr/sbin" nginx -t -p "$work/nginx" -c "$work/nginx/nginx.conf" -g "pid $work/nginx.pid; error_log $work/nginx-error.log;" 2>&1 | tail -n 1
  PATH="$PATH:/usr/sbin" nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" -g "pid $work/nginx.pid; error_log $work/nginx-error.log;"
  for _ in $(seq 1 20); do [ -s "$work/nginx.pid" ] && curl -s -o /dev/null "http://127.0.0.1:$LB_PORT/lb-health" && break; sleep 0.25; done
  lb=http://127.0.0.1:$LB_PORT
  code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
  echo "lb: /lb-health $(code $lb/lb-health), /readyz $(code $lb/readyz), /metrics $(code $lb/metrics)"
  [ "$(code $lb/lb-health)" = 200 ] && [ "$(code $lb/readyz)" = 200 ] && [ "$(code $lb/metrics)" = 404 ]
  rid=$(curl -s -D - -o /dev/null "$lb/healthz" -H 'x-request-id: smoke-req-1' | tr -d '\r' | awk -F': ' 'tolower($1)=="x-request-id"{print $2}')
  echo "lb: x-request-id passed through: $rid"; [ "$rid" = smoke-req-1 ]
  rpc='{"jsonrpc":"2.0","id":7,"method":"inds_getAllChains","params":[[]]}'
  for _ in $(seq 1 9); do curl -s "$lb/v2/rpc" -H 'content-type: application/json' -d "$rpc" | grep -q '"id":7' || { echo "lb: a request failed"; exit 1; }; done
  spread=$(grep -o '"upstream":"[^"]*"' "$work/nginx-access.log" | grep -oE '127\.0\.0\.1:[0-9]+' | sort -u | wc -l)
  echo "lb: upstreams used: $spread"; [ "$spread" = 3 ]
  # one gateway stops (SIGTERM, as docker stop sends): every request still answered
  kill -TERM "${pids[-1]}"; sleep 0.5
  ok=0; for _ in $(seq 1 9); do curl -s "$lb/v2/rpc" -H 'content-type: application/json' -d "$rpc" | grep -q '"id":7' && ok=$((ok + 1)); done
  echo "lb: with one gateway stopped, $ok of 9 answered"; [ "$ok" = 9 ]
fi
echo; echo "local topology: ok"

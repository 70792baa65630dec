#!/usr/bin/env bash
# The PostgreSQL-only ceiling for Waterline's rows: how many one-to-one messages per second
# PostgreSQL alone commits when it writes exactly what a group-commit batch writes (history, one
# outbox row, the idempotency key, the chat's seq under its row lock), with the server's writer
# count and batch size, and no server, Redis or WebSocket at all.
#   load-tests/pg-ceiling.sh HOST PORT [BATCH] [SECONDS] [WRITERS]
# Works on a scratch database (waterline_ceiling) in that cluster, created from the Flyway
# migrations and dropped afterwards. Needs psql and pgbench on the PATH. Prints one line:
#   ceiling_msgs_per_s=<n> batch=<b> writers=<w> seconds=<s>
set -euo pipefail
cd "$(dirname "$0")/.."
host=$1; port=$2; batch=${3:-256}; seconds=${4:-20}; writers=${5:-2}; pairs=300
for tool in psql pgbench; do
  command -v "$tool" >/dev/null || { echo "pg-ceiling: $tool not found on the PATH" >&2; exit 3; }
done
db=waterline_ceiling
q() { PGOPTIONS="-c client_min_messages=warning" psql -X -q -v ON_ERROR_STOP=1 -h "$host" -p "$port" -U postgres "$@"; }
q -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
trap 'q -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true' EXIT
for m in $(ls src/main/resources/db/migration/V*.sql | sort -V); do
  q -d "$db" -f "$m" >/dev/null
done
q -d "$db" -v pairs="$pairs" -f load-tests/pgbench/setup.sql >/dev/null
out=$(pgbench -n -M extended -h "$host" -p "$port" -U postgres -c "$writers" -j "$writers" -T "$seconds" \
  -D batch="$batch" -D writers="$writers" -D pairs="$pairs" -D payload=100 \
  -f load-tests/pgbench/group-commit.sql "$db" 2>&1) || { echo "$out" >&2; exit 1; }
tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
failed=$(echo "$out" | sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p')
[ "${failed:-0}" = 0 ] || { echo "$out" >&2; exit 1; }
echo "ceiling_msgs_per_s=$(echo "$tps * $batch" | bc | cut -d. -f1) batch=$batch writers=$writers seconds=$seconds"

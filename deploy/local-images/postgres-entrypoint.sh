#!/bin/sh
# The stand-in postgres:17 image's entrypoint: on an empty data folder, initdb as
# POSTGRES_USER with POSTGRES_PASSWORD and create POSTGRES_DB, as the official image does; then
# run the server in the foreground on every interface of the container.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}"
if [ "${1:-postgres}" != postgres ]; then
    exec "$@"
fi
[ "$#" -gt 0 ] && shift
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set, as for the official image}"
    user=${POSTGRES_USER:-postgres}
    db=${POSTGRES_DB:-$user}
    pwfile=$(mktemp)
    printf '%s' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" --username="$user" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
        --auth-local=trust --auth-host=scram-sha-256
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    if [ "$db" != postgres ]; then
        pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start
        psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres \
            -c "CREATE DATABASE \"$db\" OWNER \"$user\""
        pg_ctl -D "$PGDATA" -w -m fast stop
    fi
    echo "PostgreSQL init process complete; ready for start up."
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"

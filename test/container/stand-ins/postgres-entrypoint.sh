#!/bin/sh
# The stand-in postgres image's entrypoint: what the official image's does that docker-compose.yml
# relies on. On an empty data directory ($PGDATA, the volume) it makes the cluster with the
# superuser POSTGRES_USER (default postgres) and its password POSTGRES_PASSWORD (required), password
# (scram-sha-256) authentication from any address, the database POSTGRES_DB (default the user's
# name), and runs /docker-entrypoint-initdb.d/*.sql and *.sh against it, on a server that listens
# only on its socket meanwhile. Then PostgreSQL itself, as the user postgres, on every address.
set -eu

if [ "${1:-}" != postgres ]; then exec "$@"; fi

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?the postgres stand-in needs POSTGRES_PASSWORD}"
  user="${POSTGRES_USER:-postgres}"
  database="${POSTGRES_DB:-$user}"
  password_file=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$password_file"
  initdb --username="$user" --pwfile="$password_file" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password_file"
  echo 'host all all all scram-sha-256' >>"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"

  pg_ctl --wait --silent --options="-c listen_addresses=''" start
  if [ "$database" != postgres ]; then
    echo 'CREATE DATABASE :"name"' \
      | psql -X -q -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres --set=name="$database"
  fi
  for file in /docker-entrypoint-initdb.d/*; do
    case "$file" in
      *.sql) echo "initdb.d: $file"; psql -X -q -v ON_ERROR_STOP=1 --username="$user" --dbname="$database" -f "$file" ;;
      *.sh) echo "initdb.d: $file"; . "$file" ;;
    esac
  done
  pg_ctl --wait --silent --mode=fast stop
  echo "the cluster is ready; starting PostgreSQL"
fi

exec "$@"

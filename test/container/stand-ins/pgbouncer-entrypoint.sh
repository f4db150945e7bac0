#!/bin/sh
# The stand-in edoburu/pgbouncer image's entrypoint: unless /etc/pgbouncer/pgbouncer.ini exists
# (mounted), writes it from the variables docker-compose.yml sets (DB_HOST, required; DB_PORT,
# DB_USER, DB_PASSWORD, DB_NAME, AUTH_TYPE, POOL_MODE, DEFAULT_POOL_SIZE, MAX_CLIENT_CONN,
# LISTEN_PORT and IGNORE_STARTUP_PARAMETERS, with that image's defaults) and DB_USER's password in
# the auth file (in clear for plain and scram-sha-256 authentication, as md5 otherwise), then runs
# the command: PgBouncer on 0.0.0.0:5432, as the user postgres.
set -eu
config=/etc/pgbouncer/pgbouncer.ini
auth_file=/etc/pgbouncer/userlist.txt
auth_type="${AUTH_TYPE:-md5}"

if [ -n "${DB_USER:-}" ] && [ -n "${DB_PASSWORD:-}" ]; then
  case "$auth_type" in
    plain | scram-sha-256) secret="$DB_PASSWORD" ;;
    *) secret="md5$(printf '%s%s' "$DB_PASSWORD" "$DB_USER" | md5sum | cut -d ' ' -f 1)" ;;
  esac
  printf '"%s" "%s"\n' "$DB_USER" "$secret" >"$auth_file"
fi
touch "$auth_file"

if [ ! -f "$config" ]; then
  {
    echo '[databases]'
    echo "${DB_NAME:-*} = host=${DB_HOST:?the pgbouncer stand-in needs DB_HOST} port=${DB_PORT:-5432} auth_user=${DB_USER:-postgres}"
    echo '[pgbouncer]'
    echo "listen_addr = ${LISTEN_ADDR:-0.0.0.0}"
    echo "listen_port = ${LISTEN_PORT:-5432}"
    echo 'unix_socket_dir ='
    echo "auth_file = $auth_file"
    echo "auth_type = $auth_type"
    echo "ignore_startup_parameters = ${IGNORE_STARTUP_PARAMETERS:-extra_float_digits}"
    [ -z "${POOL_MODE:-}" ] || echo "pool_mode = $POOL_MODE"
    [ -z "${DEFAULT_POOL_SIZE:-}" ] || echo "default_pool_size = $DEFAULT_POOL_SIZE"
    [ -z "${MAX_CLIENT_CONN:-}" ] || echo "max_client_conn = $MAX_CLIENT_CONN"
    echo "admin_users = ${ADMIN_USERS:-postgres}"
  } >"$config"
fi

exec "$@"

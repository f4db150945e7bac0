#!/usr/bin/env bash
# Smoke test of the container image: builds it from the Dockerfile as it is, then, against a fresh
# database on a PostgreSQL this machine reaches, checks what a deployment relies on:
#   - `migrate` applies every migration with Prisma's bookkeeping, and a second run changes nothing;
#   - the service starts as uid 1000 on read-only code, and its HEALTHCHECK (/readyz) turns healthy;
#   - the first admin (ADMIN_EMAIL, ADMIN_PASSWORD) signs in and creates a product;
#   - `users-create.js` in the running container makes another user, who signs in;
#   - SIGTERM (docker stop) ends it with status 0;
#   - no container file names the deprecated /api/v1; docker-compose.yml validates, and refuses to
#     start without ADMIN_PASSWORD;
#   - docker-compose.yml comes up with that image (compose.smoke.yml) and stand-ins for the images
#     it names (stand-ins.sh: Debian's PostgreSQL, PgBouncer, Redis and HAProxy): `migrate` exits 0,
#     the database role has the settings of deploy/postgres-init.sql, three instances run, /readyz
#     answers 200 through the balancer on 127.0.0.1:3000 and the first admin signs in there
#     (through PgBouncer); `down -v` leaves no container or volume.
# Containers, the database and the compose project it makes are removed at the end; the images
# `resourceful:smoke` and `resourceful-stand-in:*` stay (the next run reuses their layers).
#
# Needs a Docker engine that can build the image (on a machine without a registry:
# scripts/container-base-image.sh first), `docker compose` or `docker-compose`, curl, and
# PostgreSQL's createdb, dropdb and psql.
# Environment: SMOKE_POSTGRES (default postgresql://postgres@127.0.0.1:5432), a server where the
# test may create and drop a database; SMOKE_BUILD=no tests the image resourceful:smoke as it is;
# SMOKE_COMPOSE_PORT (default 3000, the compose file's) publishes the balancer on another port of
# 127.0.0.1 where 3000 is taken; SMOKE_COMPOSE=no leaves the compose topology out.
set -euo pipefail
cd "$(dirname "$0")/../.."

server="${SMOKE_POSTGRES:-postgresql://postgres@127.0.0.1:5432}"
image=resourceful:smoke
name="resourceful-smoke-$$"
project=resourceful-smoke
database="container_smoke_$$"
url="$server/$database"
started=$SECONDS
failures=0
work=$(mktemp -d)
: >"$work/empty.env"  # compose reads no .env of this checkout
compose=()
compose_up=no

say() { printf '# %s\n' "$*"; }
ok() { printf 'ok - %s\n' "$*"; }
fail() { printf 'not ok - %s\n' "$*"; failures=$((failures + 1)); }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
die() { fail "$*"; exit 1; }

cleanup() {
  local status=$?
  if [ "$status" -ne 0 ] && docker container inspect "$name" >/dev/null 2>&1; then
    say "the service's last log lines:"; docker logs --tail 20 "$name" 2>&1 | sed 's/^/#   /'
  fi
  docker rm -f "$name" >/dev/null 2>&1 || true
  dropdb --if-exists --maintenance-db="$server/postgres" "$database" >/dev/null 2>&1 || true
  if [ "$compose_up" = yes ]; then
    if [ "$status" -ne 0 ]; then
      say "the compose services' last log lines:"; in_compose logs --no-color --tail 10 2>&1 | sed 's/^/#   /'
    fi
    in_compose down -v --remove-orphans >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

docker info >/dev/null 2>&1 || die "no Docker engine answers (docker info); on a machine without a registry run scripts/container-base-image.sh first"

# --- files -----------------------------------------------------------------------------------------
check "no container file names /api/v1" bash -c '! grep -n "api/v1" Dockerfile docker-compose.yml -r deploy'
if docker compose version >/dev/null 2>&1; then compose=(docker compose)
elif command -v docker-compose >/dev/null 2>&1; then compose=(docker-compose); fi
if [ "${SMOKE_COMPOSE:-yes}" = no ]; then
  say "skip: docker-compose.yml not tested (SMOKE_COMPOSE=no)"
elif [ ${#compose[@]} -eq 0 ]; then
  die "neither docker compose nor docker-compose is installed (Debian: apt-get install docker-compose; or SMOKE_COMPOSE=no)"
else
  check "docker-compose.yml validates (${compose[*]} config)" env POSTGRES_PASSWORD=x ADMIN_EMAIL=a@example.com ADMIN_PASSWORD=xxxxxxxxxxxx \
    "${compose[@]}" --env-file "$work/empty.env" -f docker-compose.yml config -q
  check "docker-compose.yml refuses to start without ADMIN_PASSWORD" bash -c \
    '! env -u ADMIN_PASSWORD POSTGRES_PASSWORD=x ADMIN_EMAIL=a@example.com "$@" -f docker-compose.yml config -q 2>/dev/null' \
    _ "${compose[@]}" --env-file "$work/empty.env"
fi

# The compose topology (run after the image's own checks) is docker-compose.yml as users run it,
# but for the images (compose.smoke.yml) and the balancer's port on 127.0.0.1: the file's 3000, or,
# when something else listens there (a service left running), a free one; SMOKE_COMPOSE_PORT
# chooses it. A chosen port is checked now, to fail before the build.
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
compose_port="${SMOKE_COMPOSE_PORT:-3000}"
if [ -z "${SMOKE_COMPOSE_PORT:-}" ] && (: </dev/tcp/127.0.0.1/3000) 2>/dev/null; then
  compose_port=$(free_port)
  say "127.0.0.1:3000 is taken: the balancer is published on $compose_port"
fi
compose_file=docker-compose.yml
compose_admin_password="smoke-$RANDOM-$RANDOM-$RANDOM"
compose_env=(POSTGRES_PASSWORD="smoke$RANDOM$RANDOM" ADMIN_EMAIL=admin@smoke.example
  ADMIN_PASSWORD="$compose_admin_password" COOKIE_SECURE=false)
in_compose() {
  env "${compose_env[@]}" "${compose[@]}" --env-file "$work/empty.env" --project-directory . -p "$project" \
    -f "$compose_file" -f test/container/compose.smoke.yml "$@"
}

if [ "${SMOKE_COMPOSE:-yes}" != no ]; then
  if [ "$compose_port" != 3000 ]; then
    compose_file="$work/docker-compose.yml"
    sed 's/"127\.0\.0\.1:3000:3000"/"127.0.0.1:'"$compose_port"':3000"/' docker-compose.yml >"$compose_file"
    grep -q "127.0.0.1:$compose_port:3000" "$compose_file" \
      || die "SMOKE_COMPOSE_PORT: docker-compose.yml does not publish \"127.0.0.1:3000:3000\" any more"
  fi
  ! (: </dev/tcp/127.0.0.1/"$compose_port") 2>/dev/null \
    || die "127.0.0.1:$compose_port is taken: stop what listens there, or choose another port with SMOKE_COMPOSE_PORT"
fi

# --- build -----------------------------------------------------------------------------------------
if [ "${SMOKE_BUILD:-yes}" = no ]; then
  say "not built (SMOKE_BUILD=no): testing the image $image as it is"
else
  t=$SECONDS
  log="${TMPDIR:-/tmp}/$name-build.log"
  DOCKER_BUILDKIT=0 docker build --network host -t "$image" . >"$log" 2>&1 \
    || { tail -n 30 "$log"; die "docker build (log: $log)"; }
  ok "docker build ($((SECONDS - t)) s)"
  # A cached build prints nothing of the step; the migrate lines below say what the image does.
  grep '^schema engine:' "$log" | sed 's/^/# /' || say "schema engine: from the cached layer"
  rm -f "$log"
fi
check "the image runs as uid 1000" test "$(docker image inspect -f '{{.Config.User}}' "$image")" = "1000:1000"
check "its HEALTHCHECK asks /readyz" bash -c "docker image inspect -f '{{json .Config.Healthcheck.Test}}' $image | grep -q /readyz"

# --- migrate ---------------------------------------------------------------------------------------
createdb --maintenance-db="$server/postgres" "$database"
migrations=$(find prisma/migrations -mindepth 2 -name migration.sql | wc -l)
out=$(docker run --rm --network host -e DATABASE_URL="$url" "$image" migrate 2>&1) || { printf '%s\n' "$out"; die "migrate"; }
printf '%s\n' "$out" | sed 's/^/#   /'
recorded=$(psql -X -A -t -d "$url" -c 'SELECT count(*) FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL')
check "migrate applied all $migrations migrations, recorded in _prisma_migrations ($recorded)" test "$recorded" = "$migrations"
out=$(docker run --rm --network host -e DATABASE_URL="$url" "$image" migrate 2>&1) || { printf '%s\n' "$out"; die "migrate, again"; }
check "migrate again: nothing to do" bash -c 'grep -q -i -e "up to date" -e "no pending migrations" <<<"$1"' _ "$out"

# --- run -------------------------------------------------------------------------------------------
port=$(free_port)
api="http://127.0.0.1:$port/api/v2"
admin_password="smoke-$RANDOM-$RANDOM-$RANDOM"
docker run -d --name "$name" --network host \
  -e PORT="$port" -e DATABASE_URL="$url" -e MIGRATE_ON_START=false \
  -e ADMIN_EMAIL=admin@smoke.example -e ADMIN_PASSWORD="$admin_password" "$image" >/dev/null
t=$SECONDS
until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do
  [ $((SECONDS - t)) -lt 90 ] || die "/readyz did not answer 200 within 90 s"
  sleep 0.5
done
ok "/readyz answers 200 after $((SECONDS - t)) s"
health=starting
while [ $((SECONDS - t)) -lt 90 ]; do
  health=$(docker inspect -f '{{.State.Health.Status}}' "$name")
  [ "$health" = starting ] || break
  sleep 1
done
[ "$health" = healthy ] || die "HEALTHCHECK: $health after $((SECONDS - t)) s"
ok "HEALTHCHECK healthy after $((SECONDS - t)) s"
check "the service runs as uid 1000" test "$(docker exec "$name" sh -c "awk '/^Uid:/ {print \$2}' /proc/1/status")" = 1000
check "its code is read-only to it" docker exec "$name" sh -c '! touch /app/dist/server.js 2>/dev/null'

jar="$work/cookies"
status=$(curl -s -o /dev/null -w '%{http_code}' -c "$jar" -H 'content-type: application/json' \
  -d "{\"email\":\"admin@smoke.example\",\"password\":\"$admin_password\"}" "$api/sessions")
check "the first admin signs in (POST /api/v2/sessions: $status)" test "$status" = 201
sku="SMOKE-$$"
body="$work/body"
status=$(curl -s -o "$body" -w '%{http_code}' -b "$jar" -H 'content-type: application/json' \
  -d "{\"name\":\"Smoke test\",\"sku\":\"$sku\",\"price\":{\"amount\":9.5}}" "$api/products")
check "the admin creates a product (POST /api/v2/products: $status)" test "$status" = 201
[ "$status" = 201 ] || sed 's/^/#   /' "$body"
check "anyone reads it (GET /api/v2/products?sku=$sku)" bash -c "curl -sf '$api/products?sku=$sku' | grep -q '\"$sku\"'"

user_password="smoke-user-$RANDOM-$RANDOM"
out=$(printf 'user@smoke.example\nSmoke User\n%s\n%s\nn\n' "$user_password" "$user_password" \
  | docker exec -i "$name" node dist/cli/users-create.js 2>"$body") || true
check "users-create.js in the container makes a user (${out:-$(tail -n 1 "$body")})" grep -q '^created user user@smoke.example' <<<"$out"
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
  -d "{\"email\":\"user@smoke.example\",\"password\":\"$user_password\"}" "$api/sessions")
check "that user signs in ($status)" test "$status" = 201

t=$SECONDS
docker stop -t 30 "$name" >/dev/null
check "SIGTERM: exits with status 0 ($((SECONDS - t)) s)" test "$(docker inspect -f '{{.State.ExitCode}}' "$name")" = 0

# --- compose ---------------------------------------------------------------------------------------
if [ "${SMOKE_COMPOSE:-yes}" != no ]; then
  t=$SECONDS
  test/container/stand-ins.sh || die "the stand-in images (test/container/stand-ins.sh)"
  ok "stand-in images for postgres, pgbouncer, redis and haproxy ($((SECONDS - t)) s)"

  # What an interrupted run left behind first.
  in_compose down -v --remove-orphans >/dev/null 2>&1 || true
  compose_up=yes
  t=$SECONDS
  in_compose up -d --no-build >"$work/up.log" 2>&1 || { sed 's/^/#   /' "$work/up.log"; die "compose up"; }
  ok "compose up: db healthy, migrate done, every service started ($((SECONDS - t)) s)"
  migrate_container=$(in_compose ps -a -q migrate)
  check "migrate exited with status 0" test "$(docker inspect -f '{{.State.ExitCode}}' "$migrate_container")" = 0
  role_timeout=$(in_compose exec -T db psql -X -A -t -U resourceful -d resourceful -c 'SHOW statement_timeout' 2>&1 | tr -d '\r') || true
  check "the database role has deploy/postgres-init.sql's statement_timeout ($role_timeout)" test "$role_timeout" = 5s
  instances=$(in_compose ps -q api | wc -l)
  check "three api instances run ($instances)" test "$instances" = 3

  t=$SECONDS
  until curl -sf -o /dev/null "http://127.0.0.1:$compose_port/readyz"; do
    [ $((SECONDS - t)) -lt 120 ] || die "/readyz did not answer 200 through the balancer within 120 s"
    sleep 0.5
  done
  ok "/readyz answers 200 through the balancer on 127.0.0.1:$compose_port, $((SECONDS - t)) s after up"
  status=$(curl -s -o "$body" -w '%{http_code}' -H 'content-type: application/json' \
    -d "{\"email\":\"admin@smoke.example\",\"password\":\"$compose_admin_password\"}" "http://127.0.0.1:$compose_port/api/v2/sessions")
  check "the first admin signs in through the balancer and PgBouncer ($status)" test "$status" = 201
  [ "$status" = 201 ] || sed 's/^/#   /' "$body"

  t=$SECONDS
  in_compose down -v --remove-orphans >"$work/down.log" 2>&1 || { sed 's/^/#   /' "$work/down.log"; die "compose down -v"; }
  compose_up=no
  left=$(docker ps -a -q --filter "label=com.docker.compose.project=$project" | wc -l)
  left_volumes=$(docker volume ls -q --filter "label=com.docker.compose.project=$project" | wc -l)
  check "compose down -v leaves no container ($left) or volume ($left_volumes) ($((SECONDS - t)) s)" \
    test "$left$left_volumes" = 00
fi

say "$((SECONDS - started)) s; $failures failed"
[ "$failures" -eq 0 ]

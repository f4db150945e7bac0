#!/bin/sh
# `migrate` in the image (/usr/local/bin/migrate): applies prisma/migrations to the database and
# exits; 0 when the database is up to date.
#   docker run --rm -e DATABASE_URL=postgresql://... resourceful migrate
# It migrates DATABASE_DIRECT_URL when set (migrations hold an advisory lock for their whole run,
# which a pooler in transaction mode cannot keep), else DATABASE_URL.
#   - With Prisma's schema engine in the image (fetched when the image was built, see
#     deploy/image/schema-engine.sh): `prisma migrate deploy`.
#   - Without it, or on the embedded database (no DATABASE_URL), which Prisma cannot reach: the
#     service's runner, `node dist/cli/migrate.js`, which applies the same files with the same
#     `_prisma_migrations` bookkeeping under the same advisory lock.
# Either one may run against a database the other migrated.
set -eu
cd /app

url="${DATABASE_DIRECT_URL:-${DATABASE_URL:-}}"
engine=
for candidate in node_modules/@prisma/engines/schema-engine-*; do
  [ -x "$candidate" ] && engine="$candidate" && break
done

if [ -n "$engine" ] && [ -n "$url" ]; then
  echo "migrate: prisma migrate deploy" >&2
  # The engine is the one in the image: Prisma downloads nothing at run time.
  DATABASE_URL="$url" PRISMA_SCHEMA_ENGINE_BINARY="$engine" exec node node_modules/prisma/build/index.js migrate deploy
fi

if [ -z "$url" ]; then
  echo "migrate: the service's runner (node dist/cli/migrate.js): no DATABASE_URL, the embedded database in ${DATA_DIR:-data}" >&2
else
  echo "migrate: the service's runner (node dist/cli/migrate.js): this image has no Prisma schema engine" >&2
fi
exec node dist/cli/migrate.js

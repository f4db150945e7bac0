#!/bin/sh
# A build step of the Dockerfile: fetches Prisma's schema engine, the native binary that
# `prisma migrate deploy` runs, into node_modules/@prisma/engines. Prisma downloads it from
# binaries.prisma.sh, or from PRISMA_ENGINES_MIRROR when that is set.
#
# SCHEMA_ENGINE (a build argument) says what happens when it cannot be downloaded:
#   auto      (default) the build goes on without it; the image's `migrate` command then applies the
#             migrations with the service's own runner (node dist/cli/migrate.js: the same files,
#             the same _prisma_migrations bookkeeping, the same advisory lock);
#   required  the build fails;
#   none      it is not even tried.
set -eu

mode="${SCHEMA_ENGINE:-auto}"
engines=node_modules/@prisma/engines
fallback="the image migrates with the service's runner (node dist/cli/migrate.js)"
say() { printf 'schema engine: %s\n' "$*"; }

case "$mode" in
  auto | required) ;;
  none) say "not fetched (SCHEMA_ENGINE=none); $fallback"; exit 0 ;;
  *) say "SCHEMA_ENGINE must be auto, required or none, not '$mode'" >&2; exit 2 ;;
esac
# An empty build argument is no mirror.
[ -n "${PRISMA_ENGINES_MIRROR:-}" ] || unset PRISMA_ENGINES_MIRROR

log=$(mktemp)
# Every Prisma command first downloads the engine for this platform (chosen by the libssl it
# finds); `version` then runs it. The download gets five minutes.
if timeout 300 node node_modules/prisma/build/index.js version >"$log" 2>&1; then
  for engine in "$engines"/schema-engine-*; do
    if [ -x "$engine" ] && version=$("$engine" --version 2>&1); then
      say "$engine ($version); the image migrates with prisma migrate deploy"
      exit 0
    fi
  done
  reason="Prisma reported no error, but no schema engine in $engines runs"
else
  reason=$(grep -m 1 -i 'error' "$log" || tail -n 1 "$log")
fi
rm -f "$engines"/schema-engine-*

if [ "$mode" = required ]; then
  say "could not be fetched (SCHEMA_ENGINE=required): $reason" >&2
  exit 1
fi
say "could not be fetched: $reason"
say "$fallback"

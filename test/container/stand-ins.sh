#!/usr/bin/env bash
# Builds the stand-in images test/container/smoke.sh runs docker-compose.yml with, where the images
# it names cannot be pulled (see stand-ins/Dockerfile): resourceful-stand-in:postgres, :pgbouncer,
# :redis and :haproxy, on the base image (node:24-bookworm-slim, or the stand-in
# scripts/container-base-image.sh makes). The first build installs Debian's packages (about a
# minute); after that Docker's cache answers every step, and a change to a file under stand-ins/
# rebuilds what depends on it.
set -euo pipefail
cd "$(dirname "$0")/stand-ins"

for target in postgres pgbouncer redis haproxy; do
  log=$(mktemp)
  if ! DOCKER_BUILDKIT=0 docker build --network host --target "$target" -t "resourceful-stand-in:$target" . >"$log" 2>&1; then
    tail -n 30 "$log" >&2
    rm -f "$log"
    printf 'stand-ins: building resourceful-stand-in:%s failed\n' "$target" >&2
    exit 1
  fi
  rm -f "$log"
done

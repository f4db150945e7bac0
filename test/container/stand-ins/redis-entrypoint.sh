#!/bin/sh
# The stand-in redis image's entrypoint: `redis-server ARGS` runs as the user redis in /data with
# protected mode off, as the official image's build makes it (containers reach it by the network's
# addresses, not loopback; ARGS may turn it on again); any other command runs as it is.
set -eu
if [ "${1:-}" = redis-server ] && [ "$(id -u)" = 0 ]; then
  shift
  exec setpriv --reuid=redis --regid=redis --init-groups redis-server --protected-mode no "$@"
fi
exec "$@"

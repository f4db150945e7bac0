#!/bin/sh
# The stand-in haproxy image's entrypoint: as the official image's, `haproxy ARGS` (or ARGS alone,
# starting with -) runs in the foreground in master-worker mode, logging to standard error.
set -eu
case "${1:-}" in -*) set -- haproxy "$@" ;; esac
if [ "${1:-}" = haproxy ]; then
  shift
  set -- haproxy -W -db "$@"
fi
exec "$@"

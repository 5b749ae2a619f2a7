# syntax=docker/dockerfile:1
# The gateway's image (deploy/compose.yaml and deploy/k8s/ use it):
#   docker build --build-arg GIT_COMMIT=$(git rev-parse HEAD) -t inscription-gateway .
# Three stages:
#   build    compiles src/ (with schema/'s generated types) into dist/, with every dependency (TypeScript)
#   deps     the production dependencies only, better-sqlite3's native binding (the SQLite source of
#            `npm run sync`) built, our fixes to dependencies (patches/) applied
#   runtime  the slim image with deps' node_modules, dist/, the migrations (sql/) and the schema files
#            (schema/), run by an unprivileged user
# build and deps use the full Debian image: a native module without a prebuilt binary for the platform
# compiles there (python3, make, g++), and the slim runtime (same Debian release) needs no toolchain.
# test/deploy/image.test.ts replays this file without Docker: exactly its COPYs into a clean directory, then
# its RUNs, then its CMD; keep the RUN commands' paths relative to WORKDIR.
ARG NODE_IMAGE=node:20-bookworm-slim
ARG BUILD_IMAGE=node:20-bookworm

FROM ${BUILD_IMAGE} AS build
WORKDIR /app
# dependencies first (their own layer, reused while package*.json are unchanged), without install scripts:
# `npm ci` would run the prepare script (the build) before the sources are in, and tsc needs no native module
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY schema ./schema
COPY src ./src
RUN npm run build

FROM ${BUILD_IMAGE} AS deps
WORKDIR /app
# production: patch-package skips the patches of dev dependencies (patches/*.dev.patch)
ENV NODE_ENV=production
COPY package.json package-lock.json ./
COPY patches ./patches
# Install scripts stay off (the root package's prepare script would build, which needs src/), except
# better-sqlite3's: `npm rebuild` runs it, which downloads the prebuilt binding or compiles it
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm rebuild better-sqlite3 \
 && npx --no-install patch-package

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    HEAP_MAX_MB=512 \
    MALLOC_ARENA_MAX=2 \
    LOG_FORMAT=json \
    EMBEDDED_DATA_DIR=/app/.data/pglite
WORKDIR /app
COPY package.json package-lock.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY sql ./sql
COPY schema ./schema
# the embedded engine's data (a demo without DATABASE_URL) belongs to the user below; the application files
# stay root-owned and read-only
RUN mkdir -p .data && chown 1000:1000 .data
# the official image's unprivileged user `node`, by number: Kubernetes' runAsNonRoot can check a number
USER 1000:1000
EXPOSE 8080
# liveness (the process serves HTTP); slim images have no curl, Node 20 has fetch
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# The commit built, last (a new commit rebuilds only these layers): an OCI label for registries and
# scanners, and the environment for the gateway's igw_build_info{commit} (src/observability/build.ts)
ARG GIT_COMMIT=unknown
LABEL org.opencontainers.image.title="inscription-gateway" \
      org.opencontainers.image.revision="${GIT_COMMIT}"
ENV GIT_COMMIT=${GIT_COMMIT}
# the V8 heap limit from HEAP_MAX_MB (as `npm start` does); `exec` leaves node as PID 1, so SIGTERM reaches
# the gateway's own shutdown (drain in-flight requests, close the pool)
CMD ["/bin/sh", "-c", "exec node --max-old-space-size=${HEAP_MAX_MB:-512} dist/main.js"]

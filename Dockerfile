# syntax=docker/dockerfile:1
# The gateway's image: `docker build -t inscription-gateway .` (deploy/compose.yaml and deploy/k8s/ use it).
# Two stages: the build stage compiles src/ into dist/ with the dev dependencies (TypeScript); the runtime
# stage has only the production dependencies, dist/, the migrations (sql/) and the schema files (schema/),
# run by an unprivileged user. test/deploy.runtime.test.ts rebuilds the runtime stage's file set in a
# temporary directory and serves from it, so a runtime import of a dev dependency fails the suite.
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# dependencies first (their own layer, reused while package*.json are unchanged); `npm ci` would also run
# the prepare script (the build), which needs src/: it runs once the sources are in
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    HEAP_MAX_MB=512 \
    LOG_FORMAT=json \
    EMBEDDED_DATA_DIR=/app/.data/pglite
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
# production dependencies only, and no install scripts (none of them needs one); then our fixes to them
# (patches/: see the README's Layout), as the postinstall script applies them elsewhere
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npx --no-install patch-package \
 && npm cache clean --force \
 && mkdir -p /app/.data \
 && chown node:node /app/.data
COPY --from=build /app/dist ./dist
COPY sql ./sql
COPY schema ./schema
# the official image's unprivileged user (uid 1000); the application files stay root-owned and read-only
USER node
EXPOSE 8080
# liveness (the process serves HTTP); slim images have no curl, Node 20 has fetch
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# the V8 heap limit from HEAP_MAX_MB (as `npm start` does); `exec` leaves node as PID 1, so SIGTERM reaches
# the gateway's own shutdown (drain in-flight requests, close the pool)
CMD ["/bin/sh", "-c", "exec node --max-old-space-size=${HEAP_MAX_MB:-512} dist/main.js"]

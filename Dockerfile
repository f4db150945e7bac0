# The service's image, on node:24-bookworm-slim: the production dependencies (stage deps) and the
# compiled code (stage build) are made apart, so that a change of code rebuilds neither the
# dependencies nor their layer. It runs as the unprivileged user `node` (uid 1000).
# docs/how-to/deploy.md says how to build it, run it and migrate with it.
#
# The build needs the npm registry and Debian's mirror, nothing else: npm ci runs no dependency's
# install script, the Prisma client is generated offline, tsc compiles. The one download from
# elsewhere, Prisma's schema engine for `prisma migrate deploy`, may fail without failing the build
# (build argument SCHEMA_ENGINE, deploy/image/schema-engine.sh): the image's `migrate` command
# then applies the migrations with the service's own runner. The build log says which it got.

FROM node:24-bookworm-slim AS base
# Prisma chooses its schema engine by the libssl it finds, and the engine links it; the slim image
# has none. (Node itself carries its own OpenSSL.)
RUN apt-get update -qq \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libssl3 >/dev/null \
 && apt-get clean && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin
# No update notices, no telemetry: nothing phones out from the build or from the running image.
ENV NPM_CONFIG_UPDATE_NOTIFIER=false \
    NPM_CONFIG_FUND=false \
    NPM_CONFIG_AUDIT=false \
    PRISMA_HIDE_UPDATE_MESSAGE=1 \
    CHECKPOINT_DISABLE=1
WORKDIR /app

# Production dependencies, and Prisma's schema engine beside them: rebuilt only when the lockfile changes.
FROM base AS deps
COPY package.json package-lock.json ./
# Dependencies' install scripts stay off (none is needed; the project allows none), so the build does
# the same with any npm version.
RUN npm ci --omit=dev --ignore-scripts
ARG SCHEMA_ENGINE=auto
ARG PRISMA_ENGINES_MIRROR=
COPY prisma.config.ts ./
COPY deploy/image/schema-engine.sh ./deploy/image/
RUN sh deploy/image/schema-engine.sh

# The compiled service: all dependencies, the Prisma client generated offline, tsc.
FROM base AS build
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY prisma.config.ts ./
COPY prisma ./prisma
COPY scripts/prisma-generate.mjs ./scripts/
RUN node scripts/prisma-generate.mjs
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM base AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data
# The code belongs to root and is read-only to the service; only DATA_DIR (the embedded database,
# when there is no DATABASE_URL) is the service's to write.
COPY package.json package-lock.json prisma.config.ts ./
COPY --from=deps /app/node_modules ./node_modules
COPY prisma ./prisma
COPY --from=build /app/dist ./dist
COPY deploy/image/migrate.sh /usr/local/bin/migrate
RUN chmod 755 /usr/local/bin/migrate && mkdir -p /app/data && chown 1000:1000 /app/data
# Numeric, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 3000
# Migrations: `migrate` (prisma migrate deploy, or the service's runner without the schema engine)
# as a step before the service starts, with MIGRATE_ON_START=false; or, by default, the service
# applies them itself when it starts, under the advisory lock, so replicas starting together are
# safe. The health check is readiness (/readyz): started, migrated, database reachable, not
# shutting down; 503 until then.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/server.js"]

# syntax=docker/dockerfile:1
# Multi-stage build: compile with dev dependencies, run with production ones only, as a non-root user.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
# `prepare` generates the Prisma client.
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --from=build --chown=node:node /app/prisma ./prisma
COPY --from=build --chown=node:node /app/prisma.config.ts ./
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 3000
# Migrations are applied once the service listens (MIGRATE_ON_START, under an advisory lock, so
# replicas starting together are safe); /readyz answers 503 until they are done. To migrate as a
# separate step instead, run `node dist/cli/migrate.js` (or `prisma migrate deploy`) and set
# MIGRATE_ON_START=false. The health check is readiness: started, migrated, database reachable.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/server.js"]

/**
 * Health probes outside /api, as `application/health+json` (draft-inadvisable-health-check):
 * `GET /livez`, the process runs and answers; `GET /readyz`, this instance should get traffic:
 * started, not shutting down, its database reachable and migrated. While starting (migrations
 * running) the API itself answers 503 too, so an instance never serves a half-migrated database.
 */
import type { FastifyInstance } from 'fastify'
import type { Database } from '../db/client.js'
import { pendingMigrations } from '../db/migrate.js'
import { ApiError } from '../errors.js'

export type Phase = 'starting' | 'ready' | 'stopping'

/** Where the instance is in its life; server.ts moves it along. */
export interface Lifecycle {
  phase: Phase
}

declare module 'fastify' {
  interface FastifyInstance {
    lifecycle: Lifecycle
  }
}

const HEALTH_TYPE = 'application/health+json'
/** Longest a readiness check waits for the database: probes time out in about a second. */
const CHECK_TIMEOUT_MS = 1000
/** Seconds a client waits before retrying while the instance starts. */
const STARTING_RETRY_AFTER = 5
const PROBES = /^\/(livez|readyz|metrics)(\?|$)/

/**
 * Whether a request is operational, a health probe or a metrics scrape (src/observability):
 * answered while starting, never rate-limited, and its credentials are not the API's.
 */
export const isProbe = (url: string): boolean => PROBES.test(url)

type Check = { status: 'pass' } | { status: 'fail'; output: string }

function withinTime<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

/** The database answers, and has every migration (checked until it has; migrations never go away). */
function databaseChecks(db: Database) {
  let migrated = false
  return async (): Promise<Record<string, Check>> => {
    try {
      await withinTime(db.query('SELECT 1', [], 'health_ping'))
      if (!migrated) {
        const pending = await withinTime(pendingMigrations(db))
        migrated = pending.length === 0
        if (!migrated) return { 'database:connection': { status: 'pass' }, 'database:migrations': { status: 'fail', output: `pending: ${pending.join(', ')}` } }
      }
      return { 'database:connection': { status: 'pass' }, 'database:migrations': { status: 'pass' } }
    } catch (error) {
      return { 'database:connection': { status: 'fail', output: error instanceof Error ? error.message : String(error) } }
    }
  }
}

const OUTPUT: Record<Exclude<Phase, 'ready'>, string> = { starting: 'starting: applying migrations', stopping: 'shutting down' }

export function installHealth(app: FastifyInstance, db: Database, lifecycle: Lifecycle): void {
  app.decorate('lifecycle', lifecycle)
  const checkDatabase = databaseChecks(db)
  app.addHook('onRequest', (request, _reply, done) => {
    if (lifecycle.phase !== 'starting' || isProbe(request.url)) return done()
    done(new ApiError('SERVICE_UNAVAILABLE', 'The service is starting; try again shortly.', [], { headers: { 'retry-after': String(STARTING_RETRY_AFTER) } }))
  })
  app.get('/livez', async (_request, reply) => reply.type(HEALTH_TYPE).send({ status: 'pass' }))
  app.get('/readyz', async (_request, reply) => {
    reply.type(HEALTH_TYPE)
    if (lifecycle.phase !== 'ready') return reply.code(503).send({ status: 'fail', output: OUTPUT[lifecycle.phase] })
    const checks = await checkDatabase()
    const pass = Object.values(checks).every((check) => check.status === 'pass')
    // The draft's shape: each check is a list of observations.
    const body = { status: pass ? 'pass' : 'fail', checks: Object.fromEntries(Object.entries(checks).map(([name, check]) => [name, [check]])) }
    return reply.code(pass ? 200 : 503).send(body)
  })
}

/**
 * GET /metrics (DESIGN "OpenAPI, clients and operations"), Prometheus text: requests by route
 * template and status (src/observability/request-durations.ts); the process's own metrics; the service's
 * (src/observability/service-metrics.ts). Outside /api and its OpenAPI documents, like the health
 * probes, and behind METRICS_TOKEN when it is set.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { ApiError } from '../errors.js'
import { RequestDurations } from './request-durations.js'

export const METRICS_PATH = '/metrics'

/**
 * Request durations' buckets, in seconds: an item is read in about a millisecond, a page in a
 * few; 5 s is a statement's time limit (STATEMENT_TIMEOUT_MS), 10 s a request's (REQUEST_TIMEOUT_MS).
 */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/**
 * The route label of a request no route took (a 404, an unversioned path's redirect): never its
 * URL, which anyone can vary without end, and each value is a series Prometheus keeps.
 */
export const UNMATCHED_ROUTE = 'unmatched'

/** The route template (`/api/v1/products/:id`), as the router matched it. */
const routeLabel = (request: FastifyRequest): string => (request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE))

let processRegistry: Registry | undefined

/**
 * Node's process metrics (CPU, memory, event loop delay, GC), collected once per process: they
 * describe the process, not one app in it (tests build many).
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** 401 with a challenge (RFC 6750 §3): `invalid_token` when a token was sent and is not the one. */
const metricsChallenge = (error?: 'invalid_token') =>
  new ApiError('UNAUTHENTICATED', 'Send the metrics token: Authorization: Bearer <METRICS_TOKEN>.', [], {
    headers: { 'www-authenticate': `Bearer realm="metrics"${error ? `, error="${error}"` : ''}` },
  })

const digest = (text: string): Buffer => createHash('sha256').update(text).digest()

/** An onRequest hook letting through only `Authorization: Bearer <token>`. */
function requireToken(token: string) {
  const expected = digest(token)
  return (request: FastifyRequest, _reply: unknown, done: HookHandlerDoneFunction): void => {
    const [scheme, value, extra] = (request.headers.authorization ?? '').trim().split(/\s+/)
    if (scheme?.toLowerCase() !== 'bearer' || !value || extra !== undefined) return done(metricsChallenge())
    // Digests have one length whatever was sent, so the comparison takes the same time for any token.
    done(timingSafeEqual(digest(value), expected) ? undefined : metricsChallenge('invalid_token'))
  }
}

/**
 * Times every answered request and serves GET /metrics; `registry` holds this app's metrics, the
 * service's added to it later.
 */
export function installMetrics(app: FastifyInstance, registry: Registry, token: string | undefined): void {
  const perProcess = processMetrics()
  // A histogram gives rates and quantiles over any window and instances; a summary's quantiles
  // cannot be added up across instances. Unrouted requests count too, under UNMATCHED_ROUTE;
  // every method, preflights included. Fastify's clock starts before the first hook.
  const durations = new RequestDurations(DURATION_BUCKETS)
  registry.registerMetric(durations as never)
  app.addHook('onResponse', (request, reply, done) => {
    durations.observe(request.method, routeLabel(request), reply.statusCode, reply.elapsedTime / 1000)
    done()
  })
  app.get(
    METRICS_PATH,
    {
      // A scrape every few seconds is not worth an info line; failures are still logged.
      logLevel: 'warn',
      exposeHeadRoute: false,
      ...(token === undefined ? {} : { onRequest: requireToken(token) }),
    },
    async (_request, reply) => reply.type(registry.contentType).send((await perProcess.metrics()) + (await registry.metrics())),
  )
}

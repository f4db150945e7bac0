/** buildApp(config): the Fastify instance with every plugin and collection registered; never listens. */
import type { SpanExporter } from '@opentelemetry/sdk-trace-node'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { Registry } from 'prom-client'
import { apiVersions, shopCollections } from './collections/index.js'
import type { Config } from './config.js'
import { openDatabase, type Database } from './db/client.js'
import { migrate } from './db/migrate.js'
import { sharingTransactions } from './db/shared-transaction.js'
import { BODY_LIMIT, installBodyParser } from './http/body-parser.js'
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/error-handler.js'
import { RequestLog } from './http/logging.js'
import cookie from '@fastify/cookie'
import { SAFE_METHODS } from './http/methods.js'
import { cachingTokens, type CachingAccounts } from './auth/token-cache.js'
import { installCaller, rejectUnusableCredentials } from './auth/caller.js'
import { hashPassword, setPasswordCost } from './auth/passwords.js'
import { registerSessions, signInThrottles } from './auth/sessions.js'
import { registerTokens } from './auth/tokens.js'
import { accounts } from './db/accounts.js'
import { idempotencyKeys } from './db/idempotency.js'
import { registerBatch } from './batch/route.js'
import { registerEventFeed } from './events/feed.js'
import { installEvents } from './events/plugin.js'
import { installCors } from './http/cors.js'
import { JSON_MEDIA_TYPE } from './http/negotiation.js'
import { requestId } from './http/request-id.js'
import { installResponseHeaders } from './http/response-headers.js'
import { memoryCounters, redisCounters, type Counters } from './http/counters.js'
import { installReadYourWrites } from './http/read-your-writes.js'
import { installRateLimit } from './http/rate-limit.js'
import { installIdempotency } from './http/idempotency.js'
import { installHealth, type Lifecycle } from './http/health.js'
import { every, PRUNE_EVERY_MS } from './http/housekeeping.js'
import { RouteTable } from './http/routes.js'
import { serverFactory } from './http/server-factory.js'
import { installTimeLimit } from './http/time-limit.js'
import { AJV_OPTIONS } from './http/validator.js'
import { compilersFactory } from './http/compilers.js'
import { installCanonicalPaths, installDeprecationNotices, installVersion, versionPrefix, Versions, type ApiVersion } from './http/versioning.js'
import { installDocument } from './openapi/document.js'
import { installDocsPage } from './openapi/docs-page.js'
import { ErrorBody } from './openapi/responses.js'
import type { Collection } from './resources/collection.js'
import { registerCollection } from './resources/collection-plugin.js'
import { relationsOf } from './resources/relations.js'
import { installTrashHousekeeping } from './resources/trash.js'
import { installMetrics } from './observability/metrics.js'
import { serviceMetrics } from './observability/service-metrics.js'
import { webhookCollections } from './webhooks/collections.js'

/** The routes of the users collection, in any version: a change there may change what a token grants. */
const USERS_ROUTE = /\/users(\/|$)/

export interface BuildOptions {
  /** An already open database (tests); otherwise the configured one is opened and closed with the app. */
  database?: Database
  logger?: FastifyServerOptions['logger']
  /** The collections to serve; the shop's by default. */
  collections?: readonly Collection[]
  /** The API versions to serve them in; the shop's by default. */
  versions?: readonly ApiVersion[]
  /**
   * `later`: return before migrating and creating the admin, to listen first and answer /readyz
   * with 503 meanwhile; the caller then runs `app.start()`. Default: start before returning.
   */
  start?: 'now' | 'later'
  /** Where spans go instead of the OTLP collector when tracing is configured (tests: an in-memory exporter). */
  spanExporter?: SpanExporter
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Checks that the database takes the service's connections (the pool's, and the migrations'
     * when MIGRATE_ON_START): run before listening, so a start that cannot work fails before a port is bound.
     */
    preflight(): Promise<void>
    /** Migrates (MIGRATE_ON_START), creates the admin (ADMIN_EMAIL), then reports ready. */
    start(): Promise<void>
    /** Each version's OpenAPI document as JSON text, by version (generated on first use after `ready`, then kept). */
    openapi: ReadonlyMap<number, () => string>
  }
}

function loggerOf(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
  }
}

/** Counters of rate limits and sign-in failures: Redis for all instances when configured, else this one's memory. */
function openCounters(config: Config, app: FastifyInstance): Counters {
  if (!config.redisUrl) return memoryCounters()
  return redisCounters({
    url: config.redisUrl,
    prefix: config.redisKeyPrefix,
    onFallback: (active, error) =>
      active
        ? app.log.error({ err: error }, 'Redis cannot be reached: rate limits and sign-in throttling count in this instance only')
        : app.log.info('Redis is back: rate limits count for every instance again'),
  })
}

/**
 * A user deleted or given other roles on this instance loses what the token cache kept of them at
 * once, once the change has committed; on the others within TOKEN_CACHE_MS.
 */
function forgetTokensAfterUserChanges(app: FastifyInstance, tokens: CachingAccounts): void {
  app.addHook('onResponse', (request, reply, done) => {
    if (!SAFE_METHODS.has(request.method) && reply.statusCode < 300 && USERS_ROUTE.test(request.routeOptions.url ?? '')) tokens.forgetTokens()
    done()
  })
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  setPasswordCost(config.auth.passwordHashCost)
  const opened = options.database ?? (await openDatabase(config.database))
  // Imported only when configured: without OTEL_EXPORTER_OTLP_ENDPOINT no OpenTelemetry code is loaded.
  const tracing = config.tracing && (await import('./observability/tracing.js')).startTracing(config.tracing, options.spanExporter)
  // Every statement through `db`, in a batch's one transaction when a batch makes it (src/db/shared-transaction.ts).
  const db = sharingTransactions(tracing ? tracing.traced(opened) : opened)
  const versions = new Versions(options.versions ?? apiVersions)
  // A bearer token is looked up at most once a second per instance (src/auth/token-cache.ts).
  const tokens = cachingTokens(accounts(db))
  const collections = [...(options.collections ?? shopCollections(config.auth.registration)), ...webhookCollections(config.webhooks.allowPrivate)]
  const app = Fastify({
    logger: options.logger ?? loggerOf(config),
    logController: new RequestLog(),
    // On close the listener stops accepting; requests already received are finished, not answered 503.
    return503OnClosing: false,
    genReqId: requestId,
    // request.ip: the client's address, from X-Forwarded-For when the connection is a trusted proxy's.
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    bodyLimit: BODY_LIMIT,
    serverFactory,
    clientErrorHandler,
    // Failures before routing (a broken percent-encoding) skip the hooks, so the notice is given here too.
    frameworkErrors: (error, request, reply) => {
      versions.announce(request, reply)
      frameworkErrors(error, request, reply)
    },
    ajv: AJV_OPTIONS,
    schemaController: { compilersFactory },
    rewriteUrl: (request) => versions.rewrite(request),
  })
  const routes = new RouteTable()
  routes.watch(app)
  const metrics = new Registry()
  const counters = openCounters(config, app)
  app.addHook('onClose', () => counters.close())
  if (!options.database) app.addHook('onClose', () => db.close())
  app.decorateRequest('responseType', JSON_MEDIA_TYPE)
  installIdempotency(app)
  const lifecycle: Lifecycle = { phase: 'starting' }
  const keys = idempotencyKeys(db)
  every(app, PRUNE_EVERY_MS, 'delete expired idempotency keys', () => keys.prune())
  installTrashHousekeeping(app, db, collections)
  const events = installEvents(app, { db, collections, newest: Math.max(...versions.all.map((v) => v.version)), config })
  const observed = serviceMetrics(metrics, { db, tailer: events.tailer, onError: (error) => app.log.warn({ err: error }, 'could not read a metric from the database') })
  const throttles = signInThrottles(counters)
  const documents = new Map<number, () => string>()
  app.decorate('openapi', documents)

  // The way of a request through the service. Fastify runs the hooks of each phase (onRequest,
  // then parsing, validation, the handler) in the order they were added, so this list, top to
  // bottom, is the order of checks (DESIGN, docs/errors.md): each step with what it may answer.
  const steps: readonly (readonly [step: string, answers: readonly number[], install: () => unknown])[] = [
    // Before any other hook: the request's span and its timer cover all of them.
    ['tracing', [], () => tracing && app.register(tracing.plugin).then(() => app.addHook('onClose', () => tracing.shutdown()))],
    ['GET /metrics, with METRICS_TOKEN', [401], () => installMetrics(app, metrics, config.metricsToken)],
    ['request id, security headers', [], () => installResponseHeaders(app)],
    ['deprecation notices', [], () => installDeprecationNotices(app, versions)],
    ['time limit (REQUEST_TIMEOUT_MS)', [408, 503], () => installTimeLimit(app, config.limits.requestTimeoutMs)],
    ['the uniform error body; unknown routes and methods', [404, 405, 414, 500], () => installErrorHandling(app, routes, versions)],
    ['/livez, /readyz', [503], () => installHealth(app, db, lifecycle)],
    // CORS first: redirects and errors from the hooks after it carry its headers too.
    ['CORS', [204], () => installCors(app, config.corsOrigins, routes, versions)],
    ['canonical paths', [301, 404], () => installCanonicalPaths(app, routes)],
    ['JSON bodies', [400, 413, 415], () => installBodyParser(app)],
    ['cookies', [], () => app.register(cookie)],
    // A failure to identify the caller is kept for later: the rate limit counts the request first.
    ['the caller: session, token or JWT', [], () => installCaller(app, tokens, config.auth, config.corsOrigins)],
    ['the token cache forgets after a change to users', [], () => forgetTokensAfterUserChanges(app, tokens)],
    ['rate limit', [429], () => installRateLimit(app, config.limits.rateLimit, counters)],
    ['unusable credentials, CSRF', [401, 403], () => app.addHook('onRequest', rejectUnusableCredentials)],
    ['the error body, one schema every document shares', [], () => app.addSchema(ErrorBody)],
    // Then, per version: negotiation (406), and the routes: 400, 404 / 403, 422, 412 / 304 / 428, 409.
    ['the API versions and their routes', [400, 403, 404, 406, 409, 412, 422, 428], () => registerVersions()],
    ['/docs', [], () => installDocsPage(app, versions)],
  ]

  const services = {
    keys,
    events: events.log,
    outbox: events.outbox,
    versions: events.versions,
    readYourWrites: installReadYourWrites(app, db, counters, config.redisUrl !== undefined),
    countLimit: config.countLimit,
    bulkMaxItems: config.limits.bulkMaxItems,
    exports: config.exports,
    relations: relationsOf(collections),
  }
  const tags = [
    { name: 'sessions', description: 'Signing in and out with a session cookie.' },
    { name: 'tokens', description: 'Bearer tokens for scripts and servers.' },
    { name: 'events', description: 'The change feed: every committed change, in order, as a page or a stream.' },
    { name: 'batch', description: 'Several operations in one request, in one transaction.' },
    ...collections.map((collection) => ({ name: collection.name, description: `The ${collection.name} collection.` })),
  ]
  // A batch may send consecutive creates in one of these as one array (src/batch/route.ts).
  const arrays = new Set(collections.filter((c) => !c.options.parent && c.options.writes !== false).map((c) => `/${c.name}`))
  async function registerVersions() {
    for (const version of versions.all) {
      await app.register(
        async (api) => {
          // Before the routes: the document records them as they are added.
          documents.set(version.version, await installDocument(api, version, tags))
          installVersion(api, version)
          registerSessions(api, tokens, config.auth, throttles)
          registerTokens(api, tokens)
          registerEventFeed(api, events.log, events.streams)
          for (const collection of collections) registerCollection(api, collection, db, version.version, services)
          registerBatch(api, { service: app, db, keys, prefix: versionPrefix(version.version), maxOperations: config.limits.batchMaxOperations, bulkMaxItems: config.limits.bulkMaxItems, arrays })
        },
        { prefix: versionPrefix(version.version) },
      )
    }
  }
  for (const [, , install] of steps) await install()

  app.decorate('preflight', async () => {
    await db.query('SELECT 1', [])
    if (config.migrateOnStart) await db.withSession((session) => session.query('SELECT 1'))
  })
  app.decorate('start', async () => {
    await counters.connected?.()
    const migrated = config.migrateOnStart ? await migrate(db) : undefined
    for (const name of migrated?.modified ?? []) app.log.warn({ migration: name }, 'migration file changed after it was applied')
    const admin = config.auth.admin
    if (admin) await tokens.ensureAdmin(admin.email, () => hashPassword(admin.password))
    events.startWorker((deliveries) => observed.countOutcomes(deliveries))
    lifecycle.phase = 'ready'
  })
  if (options.start !== 'later') await app.start()
  return app
}

// Configuration from the environment: defaults, and one clear error naming a bad variable.
import path from 'node:path'
import t from 'tap'
import { ConfigError, loadConfig } from '../src/config.js'

t.test('defaults: port 3000 on 127.0.0.1, embedded PGlite in ./data, migrations on start', async (t) => {
  t.same(loadConfig({}), {
    port: 3000,
    host: '127.0.0.1',
    database: { kind: 'pglite', dataDir: path.resolve('data') },
    migrateOnStart: true,
    corsOrigins: [],
    trustProxy: [],
    auth: { sessionIdleMinutes: 1440, sessionMaxDays: 30, cookieSecure: false, admin: undefined, registration: 'open', jwt: undefined, passwordHashCost: 17 },
    logLevel: 'info',
    limits: { requestTimeoutMs: 10_000, shutdownGraceMs: 10_000, rateLimit: { anonymous: 300, authenticated: 1200, exempt: ['127.0.0.0/8', '::1'] }, bulkMaxItems: 1000, batchMaxOperations: 100 },
    exports: { maxRows: 1_000_000, pageRows: 500 },
    redisUrl: undefined,
    redisKeyPrefix: 'resourceful:',
    countLimit: 10_000,
    eventsRetentionDays: 7,
    eventStreamsPerCaller: 5,
    eventStreamHeartbeatMs: 15_000,
    webhooks: { allowPrivate: false, timeoutMs: 10_000, retryBaseMs: 5000 },
    metricsToken: undefined,
    tracing: undefined,
  })
})

t.test('every variable is read', async (t) => {
  const config = loadConfig({
    PORT: '8080', HOST: '0.0.0.0', DATABASE_URL: 'postgresql://u@db:5432/shop', MIGRATE_ON_START: 'false', LOG_LEVEL: 'warn', STATEMENT_TIMEOUT_MS: '2000',
    REQUEST_TIMEOUT_MS: '4000', SHUTDOWN_GRACE_MS: '0', RATE_LIMIT_ANONYMOUS: '0', RATE_LIMIT_AUTHENTICATED: '60', RATE_LIMIT_EXEMPT: '10.1.2.3, fd00::/8', TRUST_PROXY: '10.0.0.0/8,::1', REDIS_URL: 'redis://cache:6379/1', REDIS_KEY_PREFIX: 'shop:',
    COUNT_LIMIT: '0', EVENTS_RETENTION_DAYS: '30', EVENT_STREAMS_PER_CALLER: '2', EVENT_STREAM_HEARTBEAT_MS: '500', WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '3000', WEBHOOK_RETRY_BASE_MS: '100',
    BULK_MAX_ITEMS: '50', BATCH_MAX_OPERATIONS: '10', EXPORT_MAX_ROWS: '5000', EXPORT_PAGE_ROWS: '250',
  })
  t.same(config, { port: 8080, host: '0.0.0.0', database: { kind: 'postgres', url: 'postgresql://u@db:5432/shop', statementTimeoutMs: 2000, pooled: false, replicaUrls: [] }, migrateOnStart: false, logLevel: 'warn', corsOrigins: [], trustProxy: ['10.0.0.0/8', '::1'],
    auth: { sessionIdleMinutes: 1440, sessionMaxDays: 30, cookieSecure: false, admin: undefined, registration: 'open', jwt: undefined, passwordHashCost: 17 },
    limits: { requestTimeoutMs: 4000, shutdownGraceMs: 0, rateLimit: { anonymous: 0, authenticated: 60, exempt: ['10.1.2.3', 'fd00::/8'] }, bulkMaxItems: 50, batchMaxOperations: 10 }, exports: { maxRows: 5000, pageRows: 250 }, redisUrl: 'redis://cache:6379/1', redisKeyPrefix: 'shop:', countLimit: 0, eventsRetentionDays: 30, eventStreamsPerCaller: 2, eventStreamHeartbeatMs: 500,
    webhooks: { allowPrivate: true, timeoutMs: 3000, retryBaseMs: 100 } })
  t.same(
    loadConfig({ SESSION_IDLE_MINUTES: '30', SESSION_MAX_DAYS: '7', COOKIE_SECURE: 'true', ADMIN_EMAIL: 'Admin@Shop.test', ADMIN_PASSWORD: 'twelve chars', REGISTRATION: 'admins' }).auth,
    { sessionIdleMinutes: 30, sessionMaxDays: 7, cookieSecure: true, admin: { email: 'admin@shop.test', password: 'twelve chars' }, registration: 'admins', jwt: undefined, passwordHashCost: 17 },
  )
  t.same(
    loadConfig({ JWT_ISSUER: 'https://id.test/', JWT_AUDIENCE: 'api', JWT_JWKS_URL: 'https://id.test/jwks', JWT_ROLES_CLAIM: 'realm_access.roles' }).auth.jwt,
    { issuer: 'https://id.test/', audience: 'api', jwksUrl: 'https://id.test/jwks', rolesClaim: 'realm_access.roles', jwksCooldownMs: 30_000 },
  )
  t.same(
    loadConfig({
      DATABASE_URL: 'postgresql://u@bouncer:6432/shop?pgbouncer=true&application_name=api',
      DATABASE_DIRECT_URL: 'postgresql://u@db:5432/shop',
      DATABASE_REPLICA_URLS: 'postgresql://u@replica-1:5432/shop, postgresql://u@replica-2:5432/shop',
    }).database,
    {
      kind: 'postgres', url: 'postgresql://u@bouncer:6432/shop?application_name=api', statementTimeoutMs: 5000, pooled: true, directUrl: 'postgresql://u@db:5432/shop',
      replicaUrls: ['postgresql://u@replica-1:5432/shop', 'postgresql://u@replica-2:5432/shop'],
    },
    'pgbouncer=true marks a pooler in transaction mode, and is not passed on',
  )
  t.same(loadConfig({ DATA_DIR: 'memory://' }).database, { kind: 'pglite', dataDir: 'memory://' })
  t.same(loadConfig({ PORT: '', DATABASE_URL: '', LOG_LEVEL: '', MIGRATE_ON_START: '', CORS_ORIGINS: '' }), loadConfig({}), 'empty means unset')
  t.same(loadConfig({ RATE_LIMIT_EXEMPT: '' }).limits.rateLimit.exempt, [], 'empty: no address is exempt')
  t.same(loadConfig({ CORS_ORIGINS: 'https://shop.example, http://localhost:5173' }).corsOrigins, ['https://shop.example', 'http://localhost:5173'])
})

t.test('a bad value is a ConfigError naming the variable', async (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ PORT: '-1' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x@y/z' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgresql://u@db/shop', DATABASE_DIRECT_URL: 'mysql://u@db/shop' }, 'DATABASE_DIRECT_URL'],
    [{ DATABASE_URL: 'postgresql://u@db/shop', DATABASE_REPLICA_URLS: 'postgresql://u@r1/shop,replica-2' }, 'DATABASE_REPLICA_URLS'],
    [{ MIGRATE_ON_START: 'maybe' }, 'MIGRATE_ON_START'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ HOST: 'a b' }, 'HOST'],
    [{ SESSION_IDLE_MINUTES: '0' }, 'SESSION_IDLE_MINUTES'],
    [{ SESSION_MAX_DAYS: 'a week' }, 'SESSION_MAX_DAYS'],
    [{ COOKIE_SECURE: 'sometimes' }, 'COOKIE_SECURE'],
    [{ PASSWORD_HASH_COST: '9' }, 'PASSWORD_HASH_COST'],
    [{ PASSWORD_HASH_COST: '21' }, 'PASSWORD_HASH_COST'],
    [{ PASSWORD_HASH_COST: 'high' }, 'PASSWORD_HASH_COST'],
    [{ ADMIN_EMAIL: 'admin@shop.test' }, 'ADMIN_PASSWORD'],
    [{ ADMIN_PASSWORD: 'a long admin password' }, 'ADMIN_EMAIL'],
    [{ ADMIN_EMAIL: 'not an email', ADMIN_PASSWORD: 'a long admin password' }, 'ADMIN_EMAIL'],
    [{ ADMIN_EMAIL: 'admin@shop.test', ADMIN_PASSWORD: 'short' }, 'ADMIN_PASSWORD'],
    [{ REGISTRATION: 'invite-only' }, 'REGISTRATION'],
    [{ JWT_ISSUER: 'https://id.test/' }, 'JWT_AUDIENCE'],
    [{ JWT_ISSUER: 'https://id.test/', JWT_AUDIENCE: 'api', JWT_JWKS_URL: 'not a url' }, 'JWT_JWKS_URL'],
    [{ CORS_ORIGINS: '*' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://shop.example/' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://shop.example/app' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'ftp://shop.example' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'shop.example' }, 'CORS_ORIGINS'],
    [{ DATABASE_URL: 'postgresql://u@db/shop', STATEMENT_TIMEOUT_MS: '50' }, 'STATEMENT_TIMEOUT_MS'],
    [{ REQUEST_TIMEOUT_MS: 'ten seconds' }, 'REQUEST_TIMEOUT_MS'],
    [{ SHUTDOWN_GRACE_MS: '-1' }, 'SHUTDOWN_GRACE_MS'],
    [{ RATE_LIMIT_ANONYMOUS: '1.5' }, 'RATE_LIMIT_ANONYMOUS'],
    [{ RATE_LIMIT_AUTHENTICATED: 'many' }, 'RATE_LIMIT_AUTHENTICATED'],
    [{ RATE_LIMIT_EXEMPT: 'localhost' }, 'RATE_LIMIT_EXEMPT'],
    [{ RATE_LIMIT_EXEMPT: '10.0.0.0/33' }, 'RATE_LIMIT_EXEMPT'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '10.0.0.1/8/8' }, 'TRUST_PROXY'],
    [{ TRUST_PROXY: '::1/129' }, 'TRUST_PROXY'],
    [{ COUNT_LIMIT: 'all' }, 'COUNT_LIMIT'],
    [{ REDIS_URL: 'http://cache:6379' }, 'REDIS_URL'],
    [{ REDIS_URL: 'not a url' }, 'REDIS_URL'],
    [{ METRICS_TOKEN: 'too-short' }, 'METRICS_TOKEN'],
    [{ METRICS_TOKEN: 'sixteen chars or more, with spaces' }, 'METRICS_TOKEN'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
  ]
  for (const [env, name] of cases) {
    t.throws(() => loadConfig(env), { name: 'ConfigError', message: new RegExp(`^${name} `) }, JSON.stringify(env))
  }
  t.ok(new ConfigError('x') instanceof Error)
})

t.test('PASSWORD_HASH_COST sets the work factor of new password hashes; production keeps OWASP\'s minimum or more', async (t) => {
  t.equal(loadConfig({}).auth.passwordHashCost, 17, 'scrypt N=2^17 by default')
  t.equal(loadConfig({ PASSWORD_HASH_COST: '10' }).auth.passwordHashCost, 10, 'cheaper hashes for tests and development')
  t.equal(loadConfig({ PASSWORD_HASH_COST: '18', NODE_ENV: 'production' }).auth.passwordHashCost, 18, 'dearer ones anywhere')
  t.throws(() => loadConfig({ PASSWORD_HASH_COST: '16', NODE_ENV: 'production' }), {
    name: 'ConfigError',
    message: 'PASSWORD_HASH_COST must be at least 17 (OWASP\'s minimum) under NODE_ENV=production (got "16")',
  })
})

t.test('observability: METRICS_TOKEN guards /metrics; OTEL_EXPORTER_OTLP_ENDPOINT turns tracing on, named by OTEL_SERVICE_NAME', async (t) => {
  t.equal(loadConfig({ METRICS_TOKEN: 'abcdefghij-._~+/0123==' }).metricsToken, 'abcdefghij-._~+/0123==', "a bearer token's characters")
  t.equal(loadConfig({ METRICS_TOKEN: '' }).metricsToken, undefined, 'empty means unset: /metrics is open')
  t.same(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }).tracing, { endpoint: 'http://collector:4318', serviceName: 'resourceful' })
  t.same(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example/base/', OTEL_SERVICE_NAME: ' shop-api ' }).tracing, { endpoint: 'https://otlp.example/base/', serviceName: 'shop-api' })
  t.equal(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_SERVICE_NAME: 'shop-api' }).tracing, undefined, 'no endpoint, no tracing')
  t.throws(() => loadConfig({ METRICS_TOKEN: 'short secret' }), { message: /^METRICS_TOKEN must be at least 16 characters/ })
  t.notMatch(String(t.throws(() => loadConfig({ METRICS_TOKEN: 'secret with spaces in it' }))), /secret with spaces/, 'the error does not repeat the token')
})

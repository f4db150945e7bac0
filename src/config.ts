/** Reads the environment once into a typed, validated configuration. */
import { isIP } from 'node:net'
import path from 'node:path'

/** The shortest password accepted, however one is set: sign-up, `npm run users:create`, ADMIN_PASSWORD. */
export const MIN_PASSWORD_LENGTH = 12

/** The work factor of new password hashes by default, as log2 of scrypt's N: OWASP's minimum, N=2^17 (r=8, p=1: 128 MiB a hash; src/auth/passwords.ts). */
export const DEFAULT_PASSWORD_COST = 17

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'
const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

export type DatabaseConfig =
  | {
      kind: 'postgres'
      url: string
      /** The longest a statement may run (STATEMENT_TIMEOUT_MS). */
      statementTimeoutMs?: number
      /**
       * `url` is a pooler in transaction mode (`?pgbouncer=true`): consecutive statements may run
       * on different server connections, so nothing may rely on a connection's state.
       */
      pooled?: boolean
      /** A direct connection for what needs one session: migrations under their advisory lock (DATABASE_DIRECT_URL). */
      directUrl?: string
      /** Read replicas that item and list reads are spread over (DATABASE_REPLICA_URLS). */
      replicaUrls?: string[]
    }
  /** `dataDir` is a folder, or `memory://` for a database that lives only as long as the process. */
  | { kind: 'pglite'; dataDir: string }

export interface Config {
  port: number
  host: string
  database: DatabaseConfig
  migrateOnStart: boolean
  logLevel: LogLevel
  /** Origins whose browser scripts may call the API (CORS), exactly as browsers send them. */
  corsOrigins: string[]
  /**
   * Addresses and networks of the proxies in front (TRUST_PROXY): from them, the client's address
   * is read from X-Forwarded-For. Empty: the connection's address is the client's.
   */
  trustProxy: string[]
  auth: AuthConfig
  limits: LimitsConfig
  exports: ExportConfig
  /** Redis for counters shared by every instance (rate limits, sign-in throttling); unset: in memory. */
  redisUrl?: string
  /** Prepended to this service's Redis keys, so that services can share one Redis. */
  redisKeyPrefix: string
  /**
   * A list counts its matching rows up to this many (COUNT_LIMIT); past it the answer has no
   * X-Total-Count and no `last` link, unless the client sends `Prefer: count=exact`.
   */
  countLimit: number
  /** The change feed keeps events this many days (EVENTS_RETENTION_DAYS); older ones are deleted. */
  eventsRetentionDays: number
  /** Event streams one caller may hold open at once on an instance (EVENT_STREAMS_PER_CALLER). */
  eventStreamsPerCaller: number
  /** An open event stream gets a comment line this often, so that proxies keep it (EVENT_STREAM_HEARTBEAT_MS). */
  eventStreamHeartbeatMs: number
  webhooks: WebhooksConfig
  /** GET /metrics answers only `Authorization: Bearer <token>` (METRICS_TOKEN); unset: anyone. */
  metricsToken?: string
  /** Traces of requests and statements, exported over OTLP (OTEL_EXPORTER_OTLP_ENDPOINT); unset: none, nothing loaded. */
  tracing?: TracingConfig
}

export interface TracingConfig {
  /** The OTLP/HTTP collector's base URL; spans are posted to `<endpoint>/v1/traces`. */
  endpoint: string
  /** Every span's `service.name` (OTEL_SERVICE_NAME). */
  serviceName: string
}

export interface WebhooksConfig {
  /**
   * Deliver to private, loopback and link-local addresses, and over plain http
   * (WEBHOOKS_ALLOW_PRIVATE): for tests and receivers on a private network. Off: https to public
   * addresses only, checked when connecting.
   */
  allowPrivate: boolean
  /** A receiver that has not answered in this many milliseconds has failed the attempt (WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number
  /** The first retry's delay; the later ones are multiples of it (WEBHOOK_RETRY_BASE_MS; src/webhooks/schedule.ts). */
  retryBaseMs: number
}

export interface LimitsConfig {
  /** A request not answered within this many milliseconds gets a 503 (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number
  /** On SIGTERM, requests in flight get this long to finish before their connections are closed. */
  shutdownGraceMs: number
  /**
   * Requests a caller may make per minute: by address when anonymous, by user when signed in; 0:
   * no limit. Requests from the `exempt` addresses and networks are not limited (RATE_LIMIT_EXEMPT).
   */
  rateLimit: { anonymous: number; authenticated: number; exempt: string[] }
  /** The most items one array POST creates, and one change by filter may change (BULK_MAX_ITEMS). */
  bulkMaxItems: number
  /** The most operations one `POST /batch` runs (BATCH_MAX_OPERATIONS). */
  batchMaxOperations: number
}

/** Exports: a list as CSV or NDJSON (src/resources/export/). */
export interface ExportConfig {
  /** The most items one export may have; when more match, a 400 before anything is sent (EXPORT_MAX_ROWS). */
  maxRows: number
  /** Rows an export reads from the database at once, a keyset page after another (EXPORT_PAGE_ROWS). */
  pageRows: number
}

export interface AuthConfig {
  /** A session ends after this long without a request (minutes). */
  sessionIdleMinutes: number
  /** A session ends this long after sign-in, however active (days). */
  sessionMaxDays: number
  /** Send the session cookie with `Secure` (set when the service is reached over HTTPS). */
  cookieSecure: boolean
  /** An admin created at start when no user has this email. */
  admin?: { email: string; password: string }
  /** Who may create accounts with `POST /users`: anyone, admins only, or nobody. */
  registration: Registration
  /** Bearer JWTs from an external identity provider, when configured. */
  jwt?: JwtConfig
  /** The work factor of new password hashes, log2 of scrypt's N (PASSWORD_HASH_COST). */
  passwordHashCost: number
}

export interface JwtConfig {
  /** The `iss` tokens must carry. */
  issuer: string
  /** The `aud` tokens must carry: this API's identifier at the provider. */
  audience: string
  /** Where the provider publishes its signing keys (JWKS). */
  jwksUrl: string
  /** The claim that lists the caller's roles; dots reach into objects (`realm_access.roles`). */
  rolesClaim: string
  /** After fetching the keys, the least time before fetching them again for an unknown key id. */
  jwksCooldownMs: number
}

export const REGISTRATIONS = ['open', 'admins', 'closed'] as const
export type Registration = (typeof REGISTRATIONS)[number]

/** A configuration value that cannot be used; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

type Env = Record<string, string | undefined>

function readPort(env: Env): number {
  const raw = env.PORT || '3000'
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN
  if (!(port >= 0 && port <= 65535)) throw new ConfigError(`PORT must be an integer from 0 to 65535 (got "${raw}")`)
  return port
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (/^(true|1|yes)$/i.test(raw)) return true
  if (/^(false|0|no)$/i.test(raw)) return false
  throw new ConfigError(`${name} must be true or false (got "${raw}")`)
}

/** A postgresql:// URL, parsed; `name` is the variable that gave it, for the error. */
function parsePostgresUrl(name: string, raw: string): URL {
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be a postgresql:// URL (it could not be parsed)`)
  }
  if (parsed.protocol !== 'postgresql:' && parsed.protocol !== 'postgres:') {
    throw new ConfigError(`${name} must be a postgresql:// URL (got the scheme "${parsed.protocol}")`)
  }
  return parsed
}

function readDatabase(env: Env): DatabaseConfig {
  if (!env.DATABASE_URL) {
    const dataDir = env.DATA_DIR || './data'
    return { kind: 'pglite', dataDir: dataDir === 'memory://' ? dataDir : path.resolve(dataDir) }
  }
  const parsed = parsePostgresUrl('DATABASE_URL', env.DATABASE_URL)
  const directUrl = env.DATABASE_DIRECT_URL || undefined
  if (directUrl) parsePostgresUrl('DATABASE_DIRECT_URL', directUrl)
  const replicaUrls = (env.DATABASE_REPLICA_URLS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  for (const replica of replicaUrls) parsePostgresUrl('DATABASE_REPLICA_URLS', replica)
  // Prisma's flag for a pooler in transaction mode; the driver is not told of it.
  const pooled = parsed.searchParams.get('pgbouncer') === 'true'
  parsed.searchParams.delete('pgbouncer')
  return {
    kind: 'postgres',
    url: pooled ? parsed.href : env.DATABASE_URL,
    statementTimeoutMs: readPositiveInteger(env, 'STATEMENT_TIMEOUT_MS', 5000, 100),
    pooled,
    directUrl,
    replicaUrls,
  }
}

function readLogLevel(env: Env): LogLevel {
  const raw = env.LOG_LEVEL || 'info'
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`)
  }
  return raw as LogLevel
}

function readHost(env: Env): string {
  const host = env.HOST || '127.0.0.1'
  if (/\s/.test(host)) throw new ConfigError(`HOST must be a host name or address (got "${host}")`)
  return host
}

/** A comma-separated list of origins (`https://shop.example`, `http://localhost:5173`). */
function readOrigins(env: Env): string[] {
  const raw = env.CORS_ORIGINS ?? ''
  const origins = raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
  for (const origin of origins) {
    let parsed: URL | undefined
    try {
      parsed = new URL(origin)
    } catch {
      parsed = undefined
    }
    // An origin is scheme, host and port only, as the Origin header carries it; `*` is refused
    // because responses may depend on credentials.
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must list origins such as https://shop.example, without a path or a trailing slash (got "${origin}")`)
    }
  }
  return origins
}

/** `address` or `address/prefix`, IPv4 or IPv6; undefined when it is neither. */
export function parseNetwork(entry: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = entry.split('/')
  const version = isIP(address)
  if (version === 0 || extra !== undefined) return undefined
  const bits = version === 4 ? 32 : 128
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined
  const prefix = prefixText === undefined ? bits : Number(prefixText)
  return prefix > bits ? undefined : { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' }
}

/** Loopback: the machine's own tools, health checks and load tests are not the API's clients. */
const DEFAULT_RATE_LIMIT_EXEMPT = ['127.0.0.0/8', '::1']

/** A comma-separated list of addresses and networks (`10.0.0.0/8, ::1`); unset: `fallback`, empty: none. */
function readNetworks(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name]
  if (raw === undefined) return fallback
  const entries = raw.split(',').map((s) => s.trim()).filter((s) => s !== '')
  const bad = entries.find((entry) => parseNetwork(entry) === undefined)
  if (bad !== undefined) throw new ConfigError(`${name} must list IP addresses or networks such as 10.0.0.0/8 or ::1 (got "${bad}")`)
  return entries
}

function readPositiveInteger(env: Env, name: string, fallback: number, min = 1): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min) throw new ConfigError(`${name} must be a whole number of at least ${min} (got "${raw}")`)
  return Number(raw)
}

function readRedisUrl(env: Env): string | undefined {
  const raw = env.REDIS_URL
  if (raw === undefined || raw === '') return undefined
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:')) throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL (got "${raw}")`)
  return raw
}

function readRegistration(env: Env): Registration {
  const raw = env.REGISTRATION || 'open'
  if (!(REGISTRATIONS as readonly string[]).includes(raw)) throw new ConfigError(`REGISTRATION must be one of ${REGISTRATIONS.join(', ')} (got "${raw}")`)
  return raw as Registration
}

function readJwt(env: Env): JwtConfig | undefined {
  const names = ['JWT_ISSUER', 'JWT_AUDIENCE', 'JWT_JWKS_URL'] as const
  const set = names.filter((name) => env[name])
  if (set.length === 0) return undefined
  const missing = names.find((name) => !env[name])
  if (missing) throw new ConfigError(`${missing} must be set together with ${set.join(' and ')}`)
  let url: URL | undefined
  try {
    url = new URL(env.JWT_JWKS_URL!)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw new ConfigError(`JWT_JWKS_URL must be an https:// (or http://) URL (got "${env.JWT_JWKS_URL}")`)
  return { issuer: env.JWT_ISSUER!, audience: env.JWT_AUDIENCE!, jwksUrl: url.href, rolesClaim: env.JWT_ROLES_CLAIM || 'roles', jwksCooldownMs: 30_000 }
}

function readAdmin(env: Env): AuthConfig['admin'] {
  const email = env.ADMIN_EMAIL || undefined
  const password = env.ADMIN_PASSWORD || undefined
  if (!email && !password) return undefined
  if (!email || !password) throw new ConfigError(`${email ? 'ADMIN_PASSWORD' : 'ADMIN_EMAIL'} must be set together with ${email ? 'ADMIN_EMAIL' : 'ADMIN_PASSWORD'}`)
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new ConfigError(`ADMIN_EMAIL must be an email address (got "${email}")`)
  if (password.length < MIN_PASSWORD_LENGTH) throw new ConfigError(`ADMIN_PASSWORD must have at least ${MIN_PASSWORD_LENGTH} characters`)
  return { email: email.toLowerCase(), password }
}

/** PASSWORD_HASH_COST's range: below 10 a hash is no work at all, above 20 one takes seconds and 1 GiB. */
const PASSWORD_COSTS = { min: 10, max: 20 }

/**
 * The work factor of new password hashes. A lower one makes each sign-up and sign-in cheaper,
 * for tests and development; under NODE_ENV=production it may not go below OWASP's minimum.
 */
function readPasswordCost(env: Env): number {
  const raw = env.PASSWORD_HASH_COST
  if (raw === undefined || raw === '') return DEFAULT_PASSWORD_COST
  const cost = /^\d{1,2}$/.test(raw) ? Number(raw) : NaN
  if (!(cost >= PASSWORD_COSTS.min && cost <= PASSWORD_COSTS.max)) {
    throw new ConfigError(`PASSWORD_HASH_COST must be a whole number from ${PASSWORD_COSTS.min} to ${PASSWORD_COSTS.max} (got "${raw}")`)
  }
  if (env.NODE_ENV === 'production' && cost < DEFAULT_PASSWORD_COST) {
    throw new ConfigError(`PASSWORD_HASH_COST must be at least ${DEFAULT_PASSWORD_COST} (OWASP's minimum) under NODE_ENV=production (got "${raw}")`)
  }
  return cost
}

/** The shortest METRICS_TOKEN: the endpoint is reachable wherever the API is, so the token must not be guessable. */
export const MIN_METRICS_TOKEN_LENGTH = 16

/** RFC 6750 §2.1's b64token: what a bearer token may hold. */
const BEARER_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

function readMetricsToken(env: Env): string | undefined {
  const token = env.METRICS_TOKEN || undefined
  if (token === undefined) return undefined
  if (!BEARER_TOKEN.test(token) || token.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(`METRICS_TOKEN must be at least ${MIN_METRICS_TOKEN_LENGTH} characters of A-Z, a-z, 0-9 and -._~+/ (a bearer token)`)
  }
  return token
}

function readTracing(env: Env): TracingConfig | undefined {
  const raw = env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined
  if (raw === undefined) return undefined
  let url: URL | undefined
  try {
    url = new URL(raw)
  } catch {
    url = undefined
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be the http:// or https:// URL of an OTLP/HTTP collector, such as http://127.0.0.1:4318 (got "${raw}")`)
  }
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || 'resourceful'
  return { endpoint: raw, serviceName }
}

/** Builds the configuration from an environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Env = process.env): Config {
  return {
    port: readPort(env),
    host: readHost(env),
    database: readDatabase(env),
    migrateOnStart: readBoolean(env, 'MIGRATE_ON_START', true),
    logLevel: readLogLevel(env),
    corsOrigins: readOrigins(env),
    trustProxy: readNetworks(env, 'TRUST_PROXY', []),
    auth: {
      sessionIdleMinutes: readPositiveInteger(env, 'SESSION_IDLE_MINUTES', 24 * 60),
      sessionMaxDays: readPositiveInteger(env, 'SESSION_MAX_DAYS', 30),
      cookieSecure: readBoolean(env, 'COOKIE_SECURE', false),
      admin: readAdmin(env),
      registration: readRegistration(env),
      jwt: readJwt(env),
      passwordHashCost: readPasswordCost(env),
    },
    limits: {
      requestTimeoutMs: readPositiveInteger(env, 'REQUEST_TIMEOUT_MS', 10_000, 100),
      shutdownGraceMs: readPositiveInteger(env, 'SHUTDOWN_GRACE_MS', 10_000, 0),
      rateLimit: {
        anonymous: readPositiveInteger(env, 'RATE_LIMIT_ANONYMOUS', 300, 0),
        authenticated: readPositiveInteger(env, 'RATE_LIMIT_AUTHENTICATED', 1200, 0),
        exempt: readNetworks(env, 'RATE_LIMIT_EXEMPT', DEFAULT_RATE_LIMIT_EXEMPT),
      },
      bulkMaxItems: readPositiveInteger(env, 'BULK_MAX_ITEMS', 1000),
      batchMaxOperations: readPositiveInteger(env, 'BATCH_MAX_OPERATIONS', 100),
    },
    exports: {
      maxRows: readPositiveInteger(env, 'EXPORT_MAX_ROWS', 1_000_000),
      pageRows: readPositiveInteger(env, 'EXPORT_PAGE_ROWS', 500),
    },
    redisUrl: readRedisUrl(env),
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'resourceful:',
    countLimit: readPositiveInteger(env, 'COUNT_LIMIT', 10_000, 0),
    eventsRetentionDays: readPositiveInteger(env, 'EVENTS_RETENTION_DAYS', 7),
    eventStreamsPerCaller: readPositiveInteger(env, 'EVENT_STREAMS_PER_CALLER', 5),
    eventStreamHeartbeatMs: readPositiveInteger(env, 'EVENT_STREAM_HEARTBEAT_MS', 15_000, 100),
    webhooks: {
      allowPrivate: readBoolean(env, 'WEBHOOKS_ALLOW_PRIVATE', false),
      timeoutMs: readPositiveInteger(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100),
      retryBaseMs: readPositiveInteger(env, 'WEBHOOK_RETRY_BASE_MS', 5000, 1),
    },
    metricsToken: readMetricsToken(env),
    tracing: readTracing(env),
  }
}

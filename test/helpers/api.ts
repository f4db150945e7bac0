/** Starts the service on a fresh database, listening on a loopback port, and talks to it over HTTP. */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp, type BuildOptions } from '../../src/app.js'
import { newSecret, secretHash } from '../../src/auth/secrets.js'
import { accounts } from '../../src/db/accounts.js'
import type { Config, DatabaseConfig } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { requestedVersion } from '../../src/http/negotiation.js'
import { migrate } from '../../src/db/migrate.js'
import { contract, type Contract, type OpenApiDocument } from './contract.js'
import { createTestDatabase, databaseKinds, type DatabaseKind } from './databases.js'

import type { Test } from 'tap'

export interface Response<T = unknown> {
  status: number
  headers: Headers
  /** The parsed JSON body, or undefined when there was none. */
  body: T
  text: string
}

export interface RequestOptions {
  headers?: Record<string, string>
  /** An object is sent as JSON; a string is sent as it is. */
  body?: unknown
}

export interface Api {
  kind: DatabaseKind
  app: FastifyInstance
  db: Database
  /** The database the service runs on (a PostgreSQL URL, or PGlite's). */
  databaseConfig: DatabaseConfig
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** The same service without credentials: what startApi and eachDatabase give. */
  anonymous: Api
  /** The same service as the admin every test service has. */
  admin: Api
  /** The same service with these credentials (`{ authorization }` or `{ cookie }`). */
  as(credentials: Record<string, string>): Api
  /** A new user with a bearer token (read and write), and the service as them. */
  newUser(options?: { roles?: string[]; name?: string }): Promise<TestUser>
  // Requests as this client's caller; one with its own Authorization or Cookie sends only those.
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>
  get<T = any>(path: string, headers?: Record<string, string>): Promise<Response<T>>
  post<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Response<T>>
  put<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Response<T>>
  patch<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Response<T>>
  delete<T = any>(path: string, headers?: Record<string, string>): Promise<Response<T>>
}

export const V1 = '/api/v1'

export interface TestUser {
  id: string
  email: string
  token: string
  api: Api
}

let users = 0

/**
 * A user and a token, written directly: signing in would hash a password with scrypt (0.45 s) per
 * user. The password hash is not a valid one, so nobody signs in as them with a password.
 */
async function createUser(db: Database, options: { roles?: string[]; name?: string } = {}) {
  const email = `user${++users}.${process.pid}@shop.test`
  const user = await accounts(db).create({ email, name: options.name ?? `User ${users}`, passwordHash: 'not-a-password-hash', roles: options.roles ?? [] })
  const token = newSecret('rf_token_')
  await accounts(db).createToken(user.id, secretHash(token), { name: 'test', scopes: ['read', 'write'], expiresAt: new Date(Date.now() + 86_400_000) })
  return { id: user.id, email, token }
}

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    database: { kind: 'pglite', dataDir: 'memory://' },
    migrateOnStart: true,
    logLevel: (process.env.LOG_LEVEL as Config['logLevel']) ?? 'silent',
    corsOrigins: [],
    trustProxy: [],
    auth: { sessionIdleMinutes: 24 * 60, sessionMaxDays: 30, cookieSecure: false, registration: 'open' },
    // Tests make many requests from one address; the limits have tests of their own.
    limits: { requestTimeoutMs: 10_000, shutdownGraceMs: 10_000, rateLimit: { anonymous: 0, authenticated: 0, exempt: [] } },
    // Tests that share a Redis keep apart.
    redisKeyPrefix: `test-${randomBytes(6).toString('hex')}:`,
    countLimit: 10_000,
    eventsRetentionDays: 7,
    eventStreamsPerCaller: 5,
    eventStreamHeartbeatMs: 15_000,
    // Receivers in tests listen on loopback; a retry comes after 50 ms, not 5 s.
    webhooks: { allowPrivate: true, timeoutMs: 2000, retryBaseMs: 50 },
    ...overrides,
  }
}

/**
 * The service on a fresh, migrated database of `kind`, with an admin; closed and dropped when `t`
 * ends. `setup` may add routes (a test's own failure cases) before the service listens. The
 * client sends no credentials: a test names who calls with `api.admin`, `api.anonymous`,
 * `api.as(...)` or a new user's `api`.
 */
export async function startApi(
  t: Pick<Test, 'teardown'>,
  kind: DatabaseKind,
  setup?: (app: FastifyInstance) => void,
  { config, statementTimeoutMs, besides, ...options }: Omit<BuildOptions, 'database'> & {
    config?: Partial<Config>
    /** PostgreSQL's statement time limit for the service's connections. */
    statementTimeoutMs?: number
    /** A second instance of the service on another's (PostgreSQL) database, as a load balancer would have it. */
    besides?: Api
  } = {},
): Promise<Api> {
  const database = besides ? { config: besides.databaseConfig, drop: async () => {} } : await createTestDatabase(kind)
  if (statementTimeoutMs !== undefined && database.config.kind === 'postgres') database.config = { ...database.config, statementTimeoutMs }
  const db = await openDatabase(database.config)
  if (!besides) await migrate(db)
  const app = await buildApp(testConfig({ ...config, database: database.config, migrateOnStart: false }), { ...options, database: db })
  setup?.(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    await db.close()
    await database.drop()
  })
  const address = app.server.address()
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  const admin = await createUser(db, { roles: ['admin'], name: 'Test admin' })
  const base = { kind, app, db, databaseConfig: database.config, origin, adminToken: admin.token }
  return apiClient(base, {})
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

type Base = Pick<Api, 'kind' | 'app' | 'db' | 'databaseConfig' | 'origin'> & { adminToken: string }

/** Contracts by document text: services of a test file mostly serve the same documents; each is compiled once. */
const contracts = new Map<string, Contract>()

/**
 * The version an answer's path is in, and the path as that version names it: `/api/v2/...`, or
 * `/api/...` asked for with a version's vendor type in Accept (routed as `/api/v{n}/...`).
 */
function versionOf(path: string, accept = ''): { version: number; path: string } | undefined {
  const versioned = /^\/api\/v(\d+)\//.exec(path)
  if (versioned) return { version: Number(versioned[1]), path }
  const version = path.startsWith('/api/') ? requestedVersion(accept) : undefined
  return version === undefined ? undefined : { version, path: `/api/v${version}${path.slice(4)}` }
}

/**
 * Every answer a test gets is checked against the service's OpenAPI document: an answer the
 * document does not describe fails the test that asked for it, with what is wrong.
 */
function checkAnswer(app: FastifyInstance, method: string, accept: string | undefined, url: string, answer: Response): void {
  const at = versionOf(new URL(url).pathname, accept)
  const text = at && !at.path.endsWith('/openapi.json') ? app.openapi.get(at.version)?.() : undefined
  if (!at || text === undefined) return
  let checked = contracts.get(text)
  if (!checked) contracts.set(text, (checked = contract(JSON.parse(text) as OpenApiDocument)))
  const problems = checked.problems({ method, path: at.path, ...answer })
  if (problems.length > 0) throw new Error(`The answer is not what the OpenAPI document says:\n  ${problems.join('\n  ')}`)
}

function apiClient(base: Base, credentials: Record<string, string>): Api {
  async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const own = Object.keys(options.headers ?? {}).some((h) => /^(authorization|cookie)$/i.test(h))
    const headers: Record<string, string> = { ...(own ? {} : credentials), ...options.headers }
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json'
    }
    const response = await fetch(base.origin + path, { method, headers, body })
    const text = await response.text()
    const type = response.headers.get('content-type') ?? ''
    const answer = { status: response.status, headers: response.headers, text, body: (text && type.includes('json') ? JSON.parse(text) : undefined) as T }
    checkAnswer(base.app, method.toUpperCase(), Object.entries(headers).find(([name]) => name.toLowerCase() === 'accept')?.[1], response.url, answer)
    return answer
  }
  const { adminToken, ...fields } = base
  return {
    ...fields,
    get anonymous() {
      return apiClient(base, {})
    },
    get admin() {
      return apiClient(base, bearer(adminToken))
    },
    as: (headers) => apiClient(base, headers),
    async newUser(options) {
      const user = await createUser(base.db, options)
      return { ...user, api: apiClient(base, bearer(user.token)) }
    },
    request,
    get: (path, headers) => request('GET', path, { headers }),
    post: (path, body, headers) => request('POST', path, { body, headers }),
    put: (path, body, headers) => request('PUT', path, { body, headers }),
    patch: (path, body, headers) => request('PATCH', path, { body, headers }),
    delete: (path, headers) => request('DELETE', path, { headers }),
  }
}

/**
 * Runs `fn` once per database kind (PostgreSQL and PGlite), each on its own fresh service; `api`
 * sends no credentials, as startApi's.
 */
export async function eachDatabase(t: Test, fn: (t: Test, api: Api) => Promise<void>): Promise<void> {
  for (const kind of databaseKinds()) {
    await t.test(kind, async (sub) => fn(sub, await startApi(sub, kind)))
  }
}

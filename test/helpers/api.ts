/** Starts the service on a fresh database, listening on a loopback port, and talks to it over HTTP. */
import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp, type BuildOptions } from '../../src/app.js'
import { newSecret, secretHash } from '../../src/auth/secrets.js'
import { accounts } from '../../src/db/accounts.js'
import { uuidv7 } from '../../src/ids.js'
import type { Config, DatabaseConfig } from '../../src/config.js'
import { openDatabase, type Database, type Statements } from '../../src/db/client.js'
import { checkAnswers, type AnswerChecks } from './contract.js'
import { createTestDatabase, eachKind, type DatabaseKind, type TestDatabase } from './databases.js'
import { TEST_PASSWORD_COST } from './passwords.js'

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

/**
 * A statement time limit for tests that wait it out on a lock they hold: short, yet long enough
 * that no ordinary statement reaches it on a loaded machine (200 ms did: a user's insert in
 * the test's own setup, with the suite running beside it).
 */
export const LOCK_WAIT_TIMEOUT_MS = 1_000

export interface TestUser {
  id: string
  email: string
  token: string
  api: Api
}

let users = 0

/**
 * A user and a token, written directly: signing in would hash a password with scrypt (0.45 s) per
 * user. The password hash is not a valid one, so nobody signs in as them with a password. The row
 * is the test's setting, as a seeded one is: no event says it was made, and the change feed a
 * test reads has only what the test did.
 */
async function createUser(db: Database, options: { roles?: string[]; name?: string } = {}) {
  const email = `user${++users}.${process.pid}@shop.test`
  const [user] = await db.query<{ id: string }>(
    'INSERT INTO users (id, email, name, password_hash, roles, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, now(), now()) RETURNING id',
    [uuidv7(), email, options.name ?? `User ${users}`, 'not-a-password-hash', options.roles ?? []],
  )
  const token = newSecret('rf_token_')
  await accounts(db).createToken(user!.id, secretHash(token), { name: 'test', scopes: ['read', 'write'], expiresAt: new Date(Date.now() + 86_400_000) })
  return { id: user!.id, email, token }
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
    auth: { sessionIdleMinutes: 24 * 60, sessionMaxDays: 30, cookieSecure: false, registration: 'open', passwordHashCost: TEST_PASSWORD_COST },
    // Tests make many requests from one address; the limits have tests of their own.
    limits: { requestTimeoutMs: 10_000, shutdownGraceMs: 10_000, rateLimit: { anonymous: 0, authenticated: 0, exempt: [] }, bulkMaxItems: 1000, batchMaxOperations: 100 },
    exports: { maxRows: 1_000_000, pageRows: 500 },
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

/** Problems with answers a service reports one by one; past this, the test has failed enough to say what is wrong. */
const MAX_REPORTED = 50

/**
 * Every answer of a test's service is held to the service's OpenAPI document (checkAnswers): one
 * the document does not describe fails the test running when it is sent, the innermost subtest of
 * `owner` under way, else `owner` itself.
 */
function failRunningTest(owner: Test): (problem: string) => void {
  const running: Test[] = []
  owner.beforeEach((test) => void running.push(test))
  owner.afterEach((test) => {
    const at = running.lastIndexOf(test)
    if (at >= 0) running.splice(at, 1)
  })
  let reported = 0
  return (problem) => {
    if (++reported > MAX_REPORTED) return
    const more = reported === MAX_REPORTED ? ` (further problems of this service are not reported)` : ''
    ;(running.at(-1) ?? owner).fail(`The answer is not what the OpenAPI document says: ${problem}${more}`, { diagnostic: false })
  }
}

/**
 * Holds every answer of `app` to its OpenAPI document, listens on a free loopback port and, when
 * `t` ends, closes the app and its database and drops it. Returns the service's origin.
 */
export async function serveForTest(
  t: Test,
  app: FastifyInstance,
  db: Database,
  database: TestDatabase,
  checks: AnswerChecks = { report: failRunningTest(t) },
): Promise<string> {
  checkAnswers(app, checks)
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(async () => {
    await app.close()
    await db.close()
    await database.drop()
  })
  const address = app.server.address()
  return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
}

/**
 * The service on a fresh, migrated database of `kind`, with an admin; closed and dropped when `t`
 * ends. `setup` may add routes (a test's own failure cases) before the service listens. The
 * client sends no credentials: a test names who calls with `api.admin`, `api.anonymous`,
 * `api.as(...)` or a new user's `api`.
 */
export async function startApi(
  t: Test,
  kind: DatabaseKind,
  setup?: (app: FastifyInstance) => void,
  { config, statementTimeoutMs, besides, onContractProblem, ...options }: Omit<BuildOptions, 'database'> & {
    config?: Partial<Config>
    /** PostgreSQL's statement time limit for the service's connections. */
    statementTimeoutMs?: number
    /** A second instance of the service on another's (PostgreSQL) database, as a load balancer would have it. */
    besides?: Api
    /** What to do with an answer the document does not describe; by default, fail the test that is running. */
    onContractProblem?: (problem: string) => void
  } = {},
): Promise<Api> {
  const database: TestDatabase = besides
    ? { config: besides.databaseConfig, open: (config) => openDatabase(config!), drop: async () => {} }
    : await createTestDatabase(kind, { migrated: true })
  if (statementTimeoutMs !== undefined && database.config.kind === 'postgres') database.config = { ...database.config, statementTimeoutMs }
  const db = await database.open(database.config)
  const app = await buildApp(testConfig({ ...config, database: database.config, migrateOnStart: false }), { ...options, database: db })
  // Routes `setup` adds are the test's own: no document has them.
  const own: { method: string; path: RegExp }[] = []
  app.addHook('onRoute', (route) => void own.push({ method: String(route.method), path: new RegExp(`^${route.url.replace(/:[^/]+/g, '[^/]+')}$`) }))
  setup?.(app)
  const origin = await serveForTest(t, app, db, database, {
    report: onContractProblem ?? failRunningTest(t),
    ignore: (method, path) => own.some((route) => route.method.includes(method) && route.path.test(path)),
  })
  const admin = await createUser(db, { roles: ['admin'], name: 'Test admin' })
  const base = { kind, app, db, databaseConfig: database.config, origin, adminToken: admin.token }
  return apiClient(base, {})
}

export /** The statements the service's reads send from here on (reads go to `db.replica`: the primary when there is none). */
function readsSeen(api: Api): string[] {
  const seen: string[] = []
  const reads = api.db.replica
  ;(api.db as { replica: Statements }).replica = {
    query: (text, params, name) => {
      seen.push(text)
      return reads.query(text, params, name)
    },
  }
  return seen
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

type Base = Pick<Api, 'kind' | 'app' | 'db' | 'databaseConfig' | 'origin'> & { adminToken: string }

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
    // JSON and this API's vendor types; not NDJSON, which is many JSON texts.
    const answer = { status: response.status, headers: response.headers, text, body: (text && /\bjson\b/.test(type) ? JSON.parse(text) : undefined) as T }
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
export function eachDatabase(t: Test, fn: (t: Test, api: Api) => Promise<void>): Promise<void> {
  return eachKind(t, async (sub, kind) => fn(sub, await startApi(sub, kind)))
}

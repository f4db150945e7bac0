/** Starts the service on a fresh database, listening on a loopback port, and talks to it over HTTP. */
import type { FastifyInstance } from 'fastify'
import { buildApp, type BuildOptions } from '../../src/app.js'
import type { Config } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
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
  /** `http://127.0.0.1:<port>` */
  origin: string
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<Response<T>>
  get<T = any>(path: string, headers?: Record<string, string>): Promise<Response<T>>
  post<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Response<T>>
  put<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Response<T>>
  patch<T = any>(path: string, body: unknown, headers?: Record<string, string>): Promise<Response<T>>
  delete<T = any>(path: string, headers?: Record<string, string>): Promise<Response<T>>
}

export const V1 = '/api/v1'

export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    database: { kind: 'pglite', dataDir: 'memory://' },
    migrateOnStart: true,
    logLevel: (process.env.LOG_LEVEL as Config['logLevel']) ?? 'silent',
    corsOrigins: [],
    auth: { sessionIdleMinutes: 24 * 60, sessionMaxDays: 30, cookieSecure: false },
    ...overrides,
  }
}

/** The service on a fresh, migrated database of `kind`; closed and dropped when `t` ends. */
/** `setup` may add routes (a test's own failure cases) before the service listens. */
export async function startApi(
  t: Pick<Test, 'teardown'>,
  kind: DatabaseKind,
  setup?: (app: FastifyInstance) => void,
  { config, ...options }: Omit<BuildOptions, 'database'> & { config?: Partial<Config> } = {},
): Promise<Api> {
  const database = await createTestDatabase(kind)
  const db = await openDatabase(database.config)
  await migrate(db)
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
  return apiClient({ kind, app, db, origin })
}

function apiClient(base: Pick<Api, 'kind' | 'app' | 'db' | 'origin'>): Api {
  async function request<T>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
    const headers: Record<string, string> = { ...options.headers }
    let body: string | undefined
    if (options.body !== undefined) {
      body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json'
    }
    const response = await fetch(base.origin + path, { method, headers, body })
    const text = await response.text()
    const type = response.headers.get('content-type') ?? ''
    return { status: response.status, headers: response.headers, text, body: (text && type.includes('json') ? JSON.parse(text) : undefined) as T }
  }
  return {
    ...base,
    request,
    get: (path, headers) => request('GET', path, { headers }),
    post: (path, body, headers) => request('POST', path, { body, headers }),
    put: (path, body, headers) => request('PUT', path, { body, headers }),
    patch: (path, body, headers) => request('PATCH', path, { body, headers }),
    delete: (path, headers) => request('DELETE', path, { headers }),
  }
}

/** Runs `fn` once per database kind (PostgreSQL and PGlite), each on its own fresh service. */
export async function eachDatabase(t: Test, fn: (t: Test, api: Api) => Promise<void>): Promise<void> {
  for (const kind of databaseKinds()) {
    await t.test(kind, async (sub) => fn(sub, await startApi(sub, kind)))
  }
}

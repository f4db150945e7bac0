/** Opens the database: PostgreSQL through node-postgres, or embedded PGlite; both behind one Database. */
import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaPGlite } from 'pglite-prisma-adapter'
import type { DatabaseConfig } from '../config.js'
import { lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { PrismaClient } from './generated/client.js'
import { defaultTemplate, isNewCluster, type ClusterTemplate } from './pglite-template.js'
import { unavailable } from './prisma-errors.js'

/** A single connection for raw SQL: the migration runner and its advisory lock. */
export interface SqlSession {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>
  /** Runs a script of several statements (a migration file). */
  exec(script: string): Promise<void>
}

export interface Database {
  readonly kind: DatabaseConfig['kind']
  readonly prisma: PrismaClient
  /**
   * One parameterised statement on the pool Prisma uses, for the few hot reads written by hand
   * (docs/decisions.md). `name` makes it a prepared statement on PostgreSQL. Values come back as
   * the driver gives them: numerics as strings, timestamps as Dates.
   */
  query<Row = Record<string, unknown>>(text: string, params: unknown[], name?: string): Promise<Row[]>
  /** Runs `fn` on one dedicated connection, released afterwards. */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Connections the service keeps to PostgreSQL; a request uses one or two at a time. */
const POOL_SIZE = 10
/** How long a request waits for a free connection (or a new one) before it is a 503 (DESIGN "Limits and faults"). */
export const POOL_TIMEOUT_MS = 2000
/** The default of STATEMENT_TIMEOUT_MS: a statement running longer is cancelled by PostgreSQL (a 503). */
export const STATEMENT_TIMEOUT_MS = 5000

/**
 * `minimal`: Prisma's other formats capture a stack trace (`new Error()`) on every query to point
 * at the call site in error messages, which the service never shows; that capture cost 4% of the
 * CPU of a product read (profile in docs/performance.md).
 */
const PRISMA_OPTIONS = { errorFormat: 'minimal' } as const

function openPostgres({ url, statementTimeoutMs = STATEMENT_TIMEOUT_MS }: Extract<DatabaseConfig, { kind: 'postgres' }>): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: POOL_TIMEOUT_MS,
    // Server-side: a statement past the limit is cancelled and its connection stays usable.
    statement_timeout: statementTimeoutMs,
    // A server that vanished without closing the connection (a failover) is noticed, not waited on.
    keepAlive: true,
  })
  // An idle connection the server closed (a restart, a failover) is dropped from the pool; the
  // next query opens another. Without a listener the event would end the process.
  pool.on('error', () => {})
  const prisma = new PrismaClient({ ...PRISMA_OPTIONS, adapter: new PrismaPg(pool, { disposeExternalPool: true }) })
  return {
    kind: 'postgres',
    prisma,
    async query(text, params, name) {
      try {
        return (await pool.query({ text, values: params, name })).rows
      } catch (error) {
        // Every hand-written statement: a database that cannot serve is a 503, whoever asked.
        throw unavailable(error) ?? error
      }
    },
    async withSession(fn) {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        return await fn({
          query: async (text, params) => (await client.query(text, params)).rows,
          exec: async (script) => void (await client.query(script)),
        })
      } finally {
        await client.end()
      }
    },
    close: () => prisma.$disconnect(),
  }
}

async function openPglite(dataDir: string, template: ClusterTemplate): Promise<Database> {
  let lock: DataDirLock | undefined
  if (dataDir !== 'memory://') {
    mkdirSync(dataDir, { recursive: true })
    // PGlite has no lock of its own: two processes on one directory each see only their own writes.
    lock = lockDataDir(dataDir)
  }
  let pglite: PGlite
  try {
    const loadDataDir = isNewCluster(dataDir) && (await template.ensure()) ? template.copyTo(dataDir) : undefined
    pglite = new PGlite(dataDir, { loadDataDir })
    await pglite.waitReady
  } catch (error) {
    lock?.release()
    throw error
  }
  const prisma = new PrismaClient({ ...PRISMA_OPTIONS, adapter: new PrismaPGlite(pglite) })
  // PGlite is one connection inside this process: the session is that connection.
  const session: SqlSession = {
    query: async <Row>(text: string, params?: unknown[]) => (await pglite.query<Row>(text, params)).rows,
    exec: async (script) => void (await pglite.exec(script)),
  }
  return {
    kind: 'pglite',
    prisma,
    query: session.query,
    withSession: (fn) => fn(session),
    async close() {
      try {
        await prisma.$disconnect()
        await pglite.close()
      } finally {
        lock?.release()
      }
    },
  }
}

/**
 * Opens the configured database; PostgreSQL is not queried until the first use. A new embedded
 * database starts as a copy of `template` (src/db/pglite-template.ts).
 */
export async function openDatabase(config: DatabaseConfig, template = defaultTemplate): Promise<Database> {
  return config.kind === 'postgres' ? openPostgres(config) : await openPglite(config.dataDir, template)
}

/** Opens the database: PostgreSQL through node-postgres, or embedded PGlite; both behind one Database. */
import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import pg from 'pg'
import type { DatabaseConfig } from '../config.js'
import { lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { defaultTemplate, isNewCluster, type ClusterTemplate } from './pglite-template.js'
import { RETRYABLE_CODES, translateDatabaseError, unavailable } from './database-errors.js'

/** A single connection for raw SQL: the migration runner and its advisory lock. */
export interface SqlSession {
  query<Row = Record<string, unknown>>(text: string, params?: unknown[]): Promise<Row[]>
  /** Runs a script of several statements (a migration file). */
  exec(script: string): Promise<void>
}

/**
 * Where hand-written statements run: the pool (each statement its own transaction) or one open
 * transaction. `name` makes a statement prepared on PostgreSQL. Values come back as the driver
 * gives them (numerics as strings, timestamps as Dates); errors come back translated
 * (src/db/database-errors.ts), or as they are when nothing explains them (a 500).
 */
export interface Statements {
  query<Row = Record<string, unknown>>(text: string, params: unknown[], name?: string): Promise<Row[]>
}

/** Statements in an open transaction. */
export interface Transaction extends Statements {
  /**
   * Runs `text` as the transaction's last statement, sent with its COMMIT in one round trip (its
   * text parameters inlined as quoted literals). An error in it rolls the whole transaction back.
   */
  beforeCommit(text: string, params: readonly unknown[]): void
}

/** What differs between the databases, for the layers above to ask instead of testing the kind (kysely's adapters). */
export interface Capabilities {
  /**
   * Other connections write concurrently (PostgreSQL). PGlite is one connection: a transaction
   * runs alone, so its readers are always at the change feed's visibility horizon.
   */
  readonly concurrentWriters: boolean
}

export interface TransactionOptions {
  /**
   * A table the transaction will write, locked ROW EXCLUSIVE in the same round trip as BEGIN,
   * before the transaction has an id: readers of the table can then see in pg_locks every
   * transaction that may still add rows to it (the change feed's horizon, src/db/events.ts).
   */
  announce?: string
}

/** A connection pool's counts now (node-postgres): its connections, the idle ones, and the requests waiting for one. */
export interface PoolCounts {
  pool: 'primary' | 'replica'
  total: number
  idle: number
  waiting: number
  max: number
}

export interface Database extends Statements {
  readonly kind: DatabaseConfig['kind']
  readonly capabilities: Capabilities
  /** The pools' counts, for the metrics (the replicas' summed); none for PGlite, one connection in the process. */
  pools(): PoolCounts[]
  /**
   * Where a read that need not see the latest writes may run: a read replica, in turn
   * (DATABASE_REPLICA_URLS); the primary when there is none, or when the replica cannot serve.
   * Never for what follows a write, a precondition, or an authentication lookup.
   */
  readonly replica: Statements
  /** Whether reads may go to replicas at all (DATABASE_REPLICA_URLS). */
  readonly replicated: boolean
  /**
   * Reads that must see every change the primary's log held at `lsn` (DESIGN "Scale": a caller
   * reads their own writes): on a replica that has replayed that far, else the primary. Where the
   * replicas stand is polled every REPLAY_POLL_MS once this or `replayed` is first asked.
   */
  readsAfter(lsn: bigint): Statements
  /** The furthest any replica has replayed the primary's log, as last polled; without replicas, past any position. */
  replayed(): bigint
  /**
   * Runs `fn` in one transaction on one connection: committed when `fn` resolves, rolled back when
   * it throws. A transaction that loses a deadlock or a serialization check runs again (up to
   * TRANSACTION_ATTEMPTS times), so `fn` must only write through `tx`. On PGlite every other
   * statement waits until it ends: inside `fn`, use `tx`, never the database itself.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>, options?: TransactionOptions): Promise<T>
  /** Runs `fn` on one dedicated connection, released afterwards. */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>
  close(): Promise<void>
}

/** Runs of a transaction that keeps losing deadlocks before its error is the client's (a 500). */
const TRANSACTION_ATTEMPTS = 3

/** Every statement's error, translated once, here. */
const translated = (error: unknown): unknown => translateDatabaseError(error) ?? error

async function translating<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (error) {
    throw translated(error)
  }
}

/** Runs `transaction` again while it loses to another (a deadlock, a serialization failure): none of its writes happened. */
async function retrying<T>(transaction: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction()
    } catch (error) {
      const code = (error as { code?: unknown }).code
      if (attempt >= TRANSACTION_ATTEMPTS || typeof code !== 'string' || !RETRYABLE_CODES.has(code)) throw translated(error)
    }
  }
}

/** The driver's text form of a parameter (a Date, an array, a JSON object), as it sends one. */
const textOf = (pg as unknown as { utils: { prepareValue(value: unknown): string | Buffer | null } }).utils.prepareValue

/**
 * `text` with its `$n` parameters replaced by quoted literals in the driver's text form, for a
 * simple query (which has no parameters). The driver's quoting doubles quotes and backslashes
 * (E'' strings), and the text is scanned once, so nothing inlined is read as a parameter again.
 */
function inline(client: pg.ClientBase, text: string, params: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = textOf(params[Number(n) - 1])
    if (value === null) return 'NULL'
    if (typeof value !== 'string') throw new TypeError('binary parameters cannot be inlined')
    return client.escapeLiteral(value)
  })
}

/** How often the replicas' replay is read, once a caller's read waits on it (Database.readsAfter). */
export const REPLAY_POLL_MS = 100
/** Past any position of the log: what the primary has. */
export const NEVER_BEHIND = 2n ** 64n

/** A pg_lsn (`16/B374D848`) as a number: the byte position in the log. */
export const lsnOf = (text: string): bigint => {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

/** SQLSTATE of a statement cancelled at its time limit. */
const QUERY_CANCELED = '57014'

/** Connections the service keeps to PostgreSQL; a request uses one or two at a time. */
const POOL_SIZE = 10
/** How long a request waits for a free connection (or a new one) before it is a 503 (DESIGN "Limits and faults"). */
export const POOL_TIMEOUT_MS = 2000
/** The default of STATEMENT_TIMEOUT_MS: a statement running longer is cancelled by PostgreSQL (a 503). */
export const STATEMENT_TIMEOUT_MS = 5000

function openPostgres({ url, statementTimeoutMs = STATEMENT_TIMEOUT_MS, pooled = false, directUrl = url, replicaUrls = [] }: Extract<DatabaseConfig, { kind: 'postgres' }>): Database {
  const poolOf = (connectionString: string) => {
    const pool = new pg.Pool({
      connectionString,
      max: POOL_SIZE,
      connectionTimeoutMillis: POOL_TIMEOUT_MS,
      // Server-side: a statement past the limit is cancelled and its connection stays usable. A
      // pooler in transaction mode refuses it as a startup parameter (PgBouncer 1.18: "unsupported
      // startup parameter"); there the role's setting applies (docs/how-to/deploy.md).
      statement_timeout: pooled ? undefined : statementTimeoutMs,
      // A server that vanished without closing the connection (a failover) is noticed, not waited on.
      keepAlive: true,
    })
    // An idle connection the server closed (a restart, a failover) is dropped from the pool; the
    // next query opens another. Without a listener the event would end the process.
    pool.on('error', () => {})
    return pool
  }
  const pool = poolOf(url)
  const replicas = replicaUrls.map(poolOf)
  let turn = 0
  const counts = (name: PoolCounts['pool'], of: pg.Pool[]): PoolCounts => ({
    pool: name,
    total: of.reduce((sum, p) => sum + p.totalCount, 0),
    idle: of.reduce((sum, p) => sum + p.idleCount, 0),
    waiting: of.reduce((sum, p) => sum + p.waitingCount, 0),
    max: of.length * POOL_SIZE,
  })
  // A named prepared statement lives on one server connection, which a pooler in transaction mode
  // does not keep for us: PgBouncer 1.18 answers `prepared statement "…" does not exist` (or
  // `already exists`). Unnamed, each statement is parsed with its own Bind and Execute.
  const run = async <Row>(client: pg.Pool | pg.PoolClient, text: string, values: unknown[], name?: string) =>
    (await client.query<Row & pg.QueryResultRow>({ text, values, name: pooled ? undefined : name })).rows as Row[]
  const query: Statements['query'] = (text, params, name) => translating(() => run(pool, text, params, name))
  /** Reads spread over `among` in turn. */
  const spread = (among: readonly pg.Pool[]): Statements => ({
    async query(text, params, name) {
      try {
        return await run(among[turn++ % among.length]!, text, params, name)
      } catch (error) {
        // A replica that cannot serve (down, restarting, its pool full) is not the client's
        // problem while the primary can: the read runs there. A statement past its time
        // limit would be as slow on the primary: that one is the client's 503.
        if (unavailable(error) && (error as { code?: unknown }).code !== QUERY_CANCELED) return query(text, params, name)
        throw translated(error)
      }
    },
  })
  const replica: Statements = replicas.length === 0 ? { query } : spread(replicas)
  // How far each replica has replayed the primary's log; -1 until known, or while it cannot answer.
  const replayed = replicas.map(() => -1n)
  let polling: NodeJS.Timeout | undefined
  let closed = false
  /** One poll at a time: a replica slow to answer is not asked again meanwhile, nor its pool filled. */
  const asking = replicas.map(() => false)
  const poll = () =>
    replicas.forEach(async (of, i) => {
      if (asking[i]) return
      asking[i] = true
      try {
        const [row] = await run<{ lsn: string | null }>(of, 'SELECT pg_last_wal_replay_lsn()::text AS lsn', [], 'replay_lsn')
        // A server that replays nothing is no standby: it has every write it will ever have.
        replayed[i] = row!.lsn === null ? NEVER_BEHIND : lsnOf(row!.lsn)
      } catch {
        replayed[i] = -1n
      } finally {
        asking[i] = false
      }
    })
  const watchReplay = () => {
    if (polling || closed) return
    polling = setInterval(poll, REPLAY_POLL_MS).unref()
    poll()
  }
  return {
    kind: 'postgres',
    capabilities: { concurrentWriters: true },
    pools: () => (replicas.length === 0 ? [counts('primary', [pool])] : [counts('primary', [pool]), counts('replica', replicas)]),
    query,
    replica,
    replicated: replicas.length > 0,
    readsAfter(lsn) {
      if (replicas.length === 0) return replica
      watchReplay()
      const caughtUp = replicas.filter((_, i) => replayed[i]! >= lsn)
      return caughtUp.length === 0 ? { query } : spread(caughtUp)
    },
    replayed() {
      if (replicas.length === 0) return NEVER_BEHIND
      watchReplay()
      return replayed.reduce((most, lsn) => (lsn > most ? lsn : most), -1n)
    },
    transaction: (fn, options) =>
      retrying(async () => {
        const client = await pool.connect()
        let broken: unknown
        try {
          // One round trip: a simple query may hold several statements.
          await client.query(options?.announce ? `BEGIN; LOCK TABLE ${options.announce} IN ROW EXCLUSIVE MODE` : 'BEGIN')
          let last = ''
          // Errors inside stay untranslated until the end: a deadlock is recognised by its SQLSTATE.
          const result = await fn({
            // The statements stay prepared: inlining the first one into BEGIN's round trip cost
            // more in parsing and planning than the round trip saved (docs/performance.md).
            query: (text, params, name) => run(client, text, params, name),
            beforeCommit: (text, params) => (last = `${inline(client, text, params)}; `),
          })
          await client.query(`${last}COMMIT`)
          return result
        } catch (error) {
          await client.query('ROLLBACK').catch((rollback: unknown) => (broken = rollback))
          throw error
        } finally {
          // A connection whose rollback failed is in an unknown state: closed, not reused.
          client.release(broken as Error | undefined)
        }
      }),
    async withSession(fn) {
      // One session for its whole length (an advisory lock): never through a transaction pooler.
      const client = new pg.Client({ connectionString: directUrl })
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
    async close() {
      closed = true
      clearInterval(polling)
      await Promise.all([pool, ...replicas].map((p) => p.end()))
    },
  }
}

/**
 * PGlite serializes an array parameter by its type's serializer, and has none for arrays of an
 * enum (`status = ANY($1)`): it would send `active,draft`. The driver's text form is an array
 * literal every array type reads, as node-postgres sends it. Every statement's parameters go
 * through it, in a transaction too.
 */
const arrayAsText = (value: unknown) => (Array.isArray(value) ? textOf(value) : value)

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
    // pg_trgm: the trigram indexes of searchable fields (a migration creates the extension).
    pglite = new PGlite(dataDir, { loadDataDir, extensions: { pg_trgm } })
    await pglite.waitReady
  } catch (error) {
    lock?.release()
    throw error
  }
  // PGlite is one connection inside this process: the session is that connection.
  const session: SqlSession = {
    query: async <Row>(text: string, params?: unknown[]) => (await pglite.query<Row>(text, params?.map(arrayAsText))).rows,
    exec: async (script) => void (await pglite.exec(script)),
  }
  const query: Statements['query'] = (text, params) => translating(() => session.query(text, params))
  return {
    kind: 'pglite',
    capabilities: { concurrentWriters: false },
    pools: () => [],
    query,
    replica: { query },
    replicated: false,
    readsAfter: () => ({ query }),
    replayed: () => NEVER_BEHIND,
    // One connection: no other transaction runs meanwhile, so there is nothing to announce.
    transaction: (fn) =>
      retrying(() =>
        pglite.transaction(async (tx) => {
          let last: [string, readonly unknown[]] | undefined
          const result = await fn({
            query: async <Row>(text: string, params: unknown[]) => (await tx.query<Row>(text, params.map(arrayAsText))).rows,
            // In process, a round trip costs nothing: it runs just before the COMMIT.
            beforeCommit: (text, params) => void (last = [text, params]),
          })
          if (last) await tx.query(last[0], last[1].map(arrayAsText))
          return result
        }),
      ),
    withSession: (fn) => fn(session),
    async close() {
      try {
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

/**
 * Fresh databases for tests: one PostgreSQL database or one in-memory PGlite per test. Migrated
 * ones start as a copy of a database migrated once per run, and go back to the next test of the
 * process emptied to that state; the others are dropped afterwards.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import type pg from 'pg'
import type { Test } from 'tap'
import type { DatabaseConfig } from '../../src/config.js'
import { openDatabase, type Database } from '../../src/db/client.js'
import { migrate, readMigrations } from '../../src/db/migrate.js'
import type { ClusterTemplate } from '../../src/db/pglite-template.js'
import { onServer, urlWithDatabase } from './postgres-server.js'

export type DatabaseKind = 'postgres' | 'pglite'

/** The PostgreSQL server tests create their databases on (scripts/test.mjs finds one). */
const serverUrl = process.env.TEST_DATABASE_URL

/**
 * The databases every conventions test runs against. TEST_DATABASES narrows the list
 * (`TEST_DATABASES=pglite`); in CI a missing PostgreSQL is an error, never a silent skip.
 */
export function databaseKinds(): DatabaseKind[] {
  const wanted = (process.env.TEST_DATABASES ?? 'postgres,pglite').split(',').map((s) => s.trim())
  const kinds = wanted.filter((k): k is DatabaseKind => k === 'postgres' || k === 'pglite')
  if (kinds.includes('postgres') && !serverUrl) {
    if (process.env.CI === 'true') throw new Error('CI needs PostgreSQL: set TEST_DATABASE_URL (scripts/test.mjs does)')
    return kinds.filter((k) => k !== 'postgres')
  }
  return kinds
}

/** Runs `fn` once per database kind (PostgreSQL and PGlite), each in a subtest named for it. */
export async function eachKind(t: Test, fn: (t: Test, kind: DatabaseKind) => Promise<void>): Promise<void> {
  for (const kind of databaseKinds()) await t.test(kind, (sub) => fn(sub, kind))
}

export interface TestDatabase {
  config: DatabaseConfig
  /** Opens it, with `config` in place of its own when given (an in-memory PGlite starts from its template). */
  open(config?: DatabaseConfig): Promise<Database>
  /** Drops the database (PostgreSQL); PGlite's memory goes with its process. */
  drop(): Promise<void>
}

/** Runs `fn` with a connection to the tests' server's maintenance database. */
const onTestServer = <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => onServer(serverUrl!, fn)

/**
 * The run these processes belong to (scripts/test.mjs sets it, and drops what it names when the
 * run ends): migrated templates are kept for the run, and shared by its test files.
 */
const RUN = process.env.TEST_RUN_ID && /^[a-z0-9]{1,16}$/.test(process.env.TEST_RUN_ID) ? process.env.TEST_RUN_ID : undefined
/** Where a run's templates are: PostgreSQL databases and a PGlite file named with this prefix. */
export const TEMPLATE_PREFIX = 'resourceful_template_'
/** Held while a run's PostgreSQL template is made, so that its test files make it once. */
const TEMPLATE_LOCK = 72_707_370

/**
 * The migrations' identity: a test that adds one (the collection generator's) gets a template of
 * its own, not the run's.
 */
function migrationsKey(): string {
  const hash = createHash('sha256')
  for (const { name, checksum } of readMigrations()) hash.update(`${name} ${checksum}\n`)
  return hash.digest('hex').slice(0, 12)
}

const postgresTemplates = new Map<string, Promise<string>>()

/**
 * A PostgreSQL database with every migration applied, made once per run under an advisory lock,
 * renamed into place only when complete, and closed to connections: `CREATE DATABASE ... TEMPLATE`
 * refuses a template anyone is connected to. Migrating takes 0.3-0.7 s; copying, 0.05 s.
 */
function migratedPostgres(): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${RUN}_${migrationsKey()}`
  const made = postgresTemplates.get(name) ?? onTestServer(async (client) => {
    await client.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK])
    try {
      if ((await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return name
      const building = `${name}_${randomBytes(4).toString('hex')}`
      await client.query(`CREATE DATABASE ${building}`)
      const db = await openDatabase({ kind: 'postgres', url: urlWithDatabase(serverUrl!, building) })
      await migrate(db).finally(() => db.close())
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
      await client.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`)
      return name
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK])
    }
  })
  postgresTemplates.set(name, made)
  return made
}

const pgliteTemplates = new Map<string, Promise<Buffer>>()

/**
 * A PGlite cluster with every migration applied, as the tar `loadDataDir` takes: made once per
 * process, or per run in a file beside the others' (written aside and renamed into place, so a
 * file that exists is whole). Migrating takes 1.3 s; loading the tar, 0.3 s.
 */
function migratedPglite(key: string): Promise<Buffer> {
  const file = RUN && path.join(tmpdir(), `${TEMPLATE_PREFIX}${RUN}_${key}.tar`)
  const made = pgliteTemplates.get(key) ?? (async () => {
    if (file && existsSync(file)) return readFileSync(file)
    const dir = mkdtempSync(path.join(tmpdir(), 'pglite-template-'))
    try {
      const db = await openDatabase({ kind: 'pglite', dataDir: dir })
      await migrate(db).finally(() => db.close())
      const pglite = await PGlite.create(dir, { extensions: { pg_trgm } })
      const tar = Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer())
      await pglite.close()
      if (file) {
        const aside = `${file}.${randomBytes(4).toString('hex')}`
        writeFileSync(aside, tar)
        renameSync(aside, file)
      }
      return tar
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })()
  pgliteTemplates.set(key, made)
  return made
}

/** A template that is always there and hands out `tar`. */
const fromTar = (tar: Buffer): ClusterTemplate => ({ ensure: async () => true, copyTo: () => new Blob([tar]) })

/**
 * What makes a migrated database's schema: its relations, columns, functions and triggers. A
 * database a test changed the schema of is not used again.
 */
const SCHEMA_PRINT = `SELECT md5(string_agg(part, ',' ORDER BY part)) AS print FROM (
  SELECT concat_ws(':', c.relname, c.relkind::text, a.attname, a.atttypid::text, a.attnotnull::text, a.atthasdef::text)
    FROM pg_class c LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
    WHERE c.relnamespace = current_schema()::regnamespace
  UNION ALL SELECT proname FROM pg_proc WHERE pronamespace = current_schema()::regnamespace
  UNION ALL SELECT tgname FROM pg_trigger WHERE NOT tgisinternal
) parts(part)`

/** Runs a statement on one session of a database (a PGlite, a client of PostgreSQL). */
type Run = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`

/** The rows a migrated database holds (the counters' zeroes), by table: what emptying one puts back. */
type Contents = readonly (readonly [table: string, rows: string])[]

const TABLES = "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations' ORDER BY 1"

async function contentsOf(run: Run): Promise<Contents> {
  const contents: [string, string][] = []
  for (const { name } of await run(TABLES)) {
    const [found] = await run(`SELECT coalesce(json_agg(t), '[]')::text AS rows FROM ${ident(String(name))} t`)
    if (found!.rows !== '[]') contents.push([String(name), String(found!.rows)])
  }
  return contents
}

/** Every table's rows deleted, but the migrations' bookkeeping, and every sequence started over. */
const DELETE_ALL = `DO $$ DECLARE r record; BEGIN
  FOR r IN ${TABLES} LOOP EXECUTE format('DELETE FROM %I', r.name); END LOOP;
  FOR r IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() LOOP EXECUTE format('ALTER SEQUENCE %I RESTART', r.sequencename); END LOOP;
END $$`

/**
 * A database back as migrated: every row deleted, the sequences started over and the migrated
 * rows put back, in one transaction. Triggers (the counts, the review stats) and foreign keys
 * stay out of it (session_replication_role, which takes a superuser; without one this fails and
 * the database is not used again). A few DELETEs cost PostgreSQL a sixth of what TRUNCATE does
 * (new files for every table and index) and a thirtieth of dropping the database and copying
 * the template again.
 */
async function emptyToMigrated(run: Run, contents: Contents): Promise<void> {
  await run('BEGIN')
  try {
    await run('SET LOCAL session_replication_role = replica')
    await run(DELETE_ALL)
    for (const [table, rows] of contents) {
      await run(`INSERT INTO ${ident(table)} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(NULL::${ident(table)}, $1)`, [rows])
    }
    await run('COMMIT')
  } catch (error) {
    await run('ROLLBACK')
    throw error
  }
}

/**
 * In-memory PGlite databases that tests are done with, emptied, for the next test of this
 * process: all of one set of migrations (`key`) and the schema they make (`print`).
 */
const idle: { key?: string; print?: Promise<string>; contents?: Promise<Contents>; databases: Database[] } = { databases: [] }
/** Idle databases kept at most; each holds its cluster in memory. */
const MAX_IDLE = 2

const schemaPrint = async (run: Run) => String((await run(SCHEMA_PRINT))[0]!.print)

/**
 * A migrated in-memory PGlite: an idle one if there is one, else a new one from the template.
 * Starting PGlite costs 2.2 s of CPU, emptying one 0.02 s. Closing it gives it back, emptied,
 * unless its schema is not the migrated one any more (a test's own trigger or table) or it fails.
 */
async function migratedPgliteDatabase(config: DatabaseConfig): Promise<Database> {
  const key = migrationsKey()
  if (idle.key !== key) {
    // An open PGlite keeps its process running; tap is loaded already in a test's process.
    if (idle.key === undefined) (await import('tap')).default.teardown(() => Promise.all(idle.databases.splice(0).map((db) => db.close())))
    await Promise.all(idle.databases.splice(0).map((db) => db.close()))
    Object.assign(idle, { key, print: undefined, contents: undefined })
  }
  const db = idle.databases.pop() ?? (await openDatabase(config, fromTar(await migratedPglite(key))))
  const run: Run = (text, params = []) => db.query(text, params)
  // Read from the first one before any test writes to it: what every one starts as.
  const print = (idle.print ??= schemaPrint(run))
  const contents = (idle.contents ??= contentsOf(run))
  await Promise.all([print, contents])
  return {
    ...db,
    async close() {
      try {
        if (idle.key !== key || idle.databases.length >= MAX_IDLE || (await schemaPrint(run)) !== (await print)) throw new Error('not kept')
        await emptyToMigrated(run, await contents)
        idle.databases.push(db)
      } catch {
        await db.close()
      }
    },
  }
}

/**
 * PostgreSQL databases copied from the run's template that tests are done with, emptied, for the
 * next test of this process: copying the template and dropping the copy cost PostgreSQL 0.44 s
 * of CPU a test (the copy goes through its write-ahead log), emptying one 0.02 s.
 */
const idlePostgres: { template?: string; print?: Promise<string>; contents?: Promise<Contents>; names: string[] } = { names: [] }
const MAX_IDLE_POSTGRES = 4

const onDatabase = <T>(name: string, fn: (run: Run) => Promise<T>) =>
  onServer(urlWithDatabase(serverUrl!, name), (client) => fn(async (text, params) => (await client.query(text, params)).rows))

const dropPostgres = (name: string) => onTestServer(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)))

/** A copy of the run's migrated template: an idle one if there is one. */
async function migratedPostgresDatabase(template: string): Promise<string> {
  if (idlePostgres.template !== template) {
    if (idlePostgres.template === undefined) (await import('tap')).default.teardown(() => Promise.all(idlePostgres.names.splice(0).map(dropPostgres)))
    await Promise.all(idlePostgres.names.splice(0).map(dropPostgres))
    Object.assign(idlePostgres, { template, print: undefined, contents: undefined })
  }
  const idleName = idlePostgres.names.pop()
  if (idleName) return idleName
  const name = `resourceful_test_${randomBytes(6).toString('hex')}`
  await onTestServer((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`))
  // Read from the first copy before any test writes to it: what every copy starts as.
  idlePostgres.print ??= onDatabase(name, schemaPrint)
  idlePostgres.contents ??= onDatabase(name, contentsOf)
  await Promise.all([idlePostgres.print, idlePostgres.contents])
  return name
}

/**
 * Gives a copy back for the next test, emptied, or drops it: one whose schema a test changed,
 * one emptying fails for, one past the idle ones kept. Whoever is still connected is
 * disconnected first, as dropping it would.
 */
async function releasePostgres(name: string, template: string): Promise<void> {
  try {
    if (idlePostgres.template !== template || idlePostgres.names.length >= MAX_IDLE_POSTGRES) throw new Error('not kept')
    await onDatabase(name, async (run) => {
      await run('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
      // A lock a disconnected session held goes with it; one that does not is a reason to drop.
      await run("SET lock_timeout = '5s'")
      if ((await schemaPrint(run)) !== (await idlePostgres.print)) throw new Error('not kept')
      await emptyToMigrated(run, (await idlePostgres.contents)!)
    })
    idlePostgres.names.push(name)
  } catch {
    await dropPostgres(name)
  }
}

/**
 * A new database of the given kind: empty, or with every migration applied (`migrated`), which
 * outside a run of scripts/test.mjs PostgreSQL does by migrating it.
 */
export async function createTestDatabase(kind: DatabaseKind, { migrated = false } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const config: DatabaseConfig = { kind: 'pglite', dataDir: 'memory://' }
    return { config, open: () => (migrated ? migratedPgliteDatabase(config) : openDatabase(config)), drop: async () => {} }
  }
  const template = migrated && RUN ? await migratedPostgres() : undefined
  if (template) {
    const name = await migratedPostgresDatabase(template)
    return { config: { kind: 'postgres', url: urlWithDatabase(serverUrl!, name) }, open: (given) => openDatabase(given ?? { kind: 'postgres', url: urlWithDatabase(serverUrl!, name) }), drop: () => releasePostgres(name, template) }
  }
  const name = `resourceful_test_${randomBytes(6).toString('hex')}`
  await onTestServer((client) => client.query(`CREATE DATABASE ${name}`))
  const config: DatabaseConfig = { kind: 'postgres', url: urlWithDatabase(serverUrl!, name) }
  return {
    config,
    async open(given = config) {
      const db = await openDatabase(given)
      if (migrated) await migrate(db)
      return db
    },
    drop: () => dropPostgres(name),
  }
}

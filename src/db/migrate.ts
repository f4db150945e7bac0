/** Applies prisma/migrations with the same bookkeeping as `prisma migrate deploy`, under its advisory lock. */
import { createHash, randomUUID } from 'node:crypto'
import { readdirSync, readFileSync, existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Database, SqlSession } from './client.js'

/** Both from src/db and from dist/db, the migrations are two folders up. */
export const MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url))

/** The key `prisma migrate deploy` locks, so this runner and Prisma's CLI never run at the same time. */
const PRISMA_ADVISORY_LOCK = 72707369

export interface Migration {
  name: string
  script: string
  /** SHA-256 of the file, hex, as Prisma records it. */
  checksum: string
}

interface AppliedRow {
  migration_name: string
  checksum: string
  finished_at: Date | null
  rolled_back_at: Date | null
}

export interface MigrateResult {
  applied: string[]
  /** Recorded migrations whose file changed since they were applied. */
  modified: string[]
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

/** The migration files in the order Prisma applies them (folder names sort by timestamp). */
export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(`${dir}/${entry.name}/migration.sql`))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const script = readFileSync(`${dir}/${name}/migration.sql`, 'utf8')
      return { name, script, checksum: createHash('sha256').update(script).digest('hex') }
    })
}

// The table exactly as Prisma's schema engine creates it.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`

async function applyOne(session: SqlSession, migration: Migration): Promise<void> {
  const id = randomUUID()
  await session.query(
    'INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at) VALUES ($1, $2, $3, now())',
    [id, migration.checksum, migration.name],
  )
  try {
    await session.exec('BEGIN')
    await session.exec(migration.script)
    await session.exec('COMMIT')
  } catch (error) {
    await session.exec('ROLLBACK')
    const message = error instanceof Error ? error.message : String(error)
    await session.query('UPDATE "_prisma_migrations" SET logs = $2 WHERE id = $1', [id, message])
    throw new MigrationError(`migration ${migration.name} failed: ${message}`, { cause: error })
  }
  await session.query(
    'UPDATE "_prisma_migrations" SET finished_at = now(), applied_steps_count = 1 WHERE id = $1',
    [id],
  )
}

async function migrateLocked(session: SqlSession, migrations: Migration[]): Promise<MigrateResult> {
  await session.exec(CREATE_TABLE)
  const rows = await session.query<AppliedRow>(
    'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
  )
  const failed = rows.find((row) => row.finished_at === null && row.rolled_back_at === null)
  if (failed) {
    throw new MigrationError(
      `migration ${failed.migration_name} failed earlier; fix the database and mark it rolled back before migrating again`,
    )
  }
  const done = new Map(rows.filter((row) => row.finished_at !== null).map((row) => [row.migration_name, row]))
  const result: MigrateResult = { applied: [], modified: [] }
  for (const migration of migrations) {
    const row = done.get(migration.name)
    if (row) {
      if (row.checksum !== migration.checksum) result.modified.push(migration.name)
      continue
    }
    await applyOne(session, migration)
    result.applied.push(migration.name)
  }
  return result
}

/** Applies every migration not yet recorded. Safe to run from several processes at once. */
export async function migrate(db: Database, migrations = readMigrations()): Promise<MigrateResult> {
  return db.withSession(async (session) => {
    await session.query(`SELECT pg_advisory_lock(${PRISMA_ADVISORY_LOCK})`)
    try {
      return await migrateLocked(session, migrations)
    } finally {
      await session.query(`SELECT pg_advisory_unlock(${PRISMA_ADVISORY_LOCK})`)
    }
  })
}

/** The migrations not yet applied to the database (all of them when it has never been migrated). */
export async function pendingMigrations(db: Database, migrations = readMigrations()): Promise<string[]> {
  const exists = await db.query<{ found: boolean }>("SELECT to_regclass('_prisma_migrations') IS NOT NULL AS found", [])
  if (!exists[0]?.found) return migrations.map((m) => m.name)
  const rows = await db.query<{ migration_name: string }>('SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL', [])
  const done = new Set(rows.map((row) => row.migration_name))
  return migrations.filter((m) => !done.has(m.name)).map((m) => m.name)
}

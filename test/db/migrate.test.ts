// The migration runner: Prisma's bookkeeping, its advisory lock, and refusal after a failure.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { migrate, MigrationError, MIGRATIONS_DIR, readMigrations } from '../../src/db/migrate.js'
import { testConfig } from '../helpers/api.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'

async function freshDatabase(t: Test, kind: 'postgres' | 'pglite') {
  const database = await createTestDatabase(kind)
  const db = await openDatabase(database.config)
  t.teardown(async () => {
    await db.close()
    await database.drop()
  })
  return { database, db }
}

for (const kind of databaseKinds()) {
  t.test(`${kind}: migrations are recorded in _prisma_migrations exactly as prisma migrate deploy records them`, async (t) => {
    const { db } = await freshDatabase(t, kind)
    const files = readMigrations()
    t.ok(files.length > 0)
    t.same((await migrate(db)).applied, files.map((m) => m.name))
    const rows = await db.withSession((s) =>
      s.query<Record<string, unknown>>('SELECT id, checksum, migration_name, logs, finished_at, rolled_back_at, applied_steps_count FROM _prisma_migrations ORDER BY started_at'),
    )
    t.equal(rows.length, files.length)
    const first = rows[0]!
    const sql = readFileSync(`${MIGRATIONS_DIR}/${files[0]!.name}/migration.sql`)
    t.equal(first.checksum, createHash('sha256').update(sql).digest('hex'), 'checksum: SHA-256 of the file')
    t.match(first.id, /^[0-9a-f-]{36}$/)
    t.equal(first.logs, null)
    t.equal(first.rolled_back_at, null)
    t.equal(first.applied_steps_count, 1)
    t.ok(first.finished_at instanceof Date)
    t.same(await migrate(db), { applied: [], modified: [] }, 'a second run has nothing to do')
  })

  t.test(`${kind}: a failing migration is rolled back, recorded with its error, and blocks later runs`, async (t) => {
    const { db } = await freshDatabase(t, kind)
    const good = readMigrations()
    const bad = { name: '29990101000000_broken', script: 'CREATE TABLE half_done (id int); SELECT * FROM no_such_table;', checksum: 'x' }
    await t.rejects(migrate(db, [...good, bad]), MigrationError)
    const rows = await db.withSession((s) => s.query<{ migration_name: string; finished_at: Date | null; logs: string }>('SELECT migration_name, finished_at, logs FROM _prisma_migrations'))
    const failed = rows.find((r) => r.migration_name === bad.name)!
    t.equal(failed.finished_at, null)
    t.match(failed.logs, /no_such_table/)
    const halfDone = await db.withSession((s) => s.query("SELECT to_regclass('half_done') AS t"))
    t.same(halfDone, [{ t: null }], 'the statements before the failure were rolled back')
    await t.rejects(migrate(db, good), /failed earlier/, 'no further migration runs until someone resolves it')
  })

  t.test(`${kind}: a migration file changed after it was applied is reported`, async (t) => {
    const { db } = await freshDatabase(t, kind)
    await migrate(db)
    const changed = readMigrations().map((m, i) => (i === 0 ? { ...m, checksum: '0'.repeat(64) } : m))
    t.same((await migrate(db, changed)).modified, [changed[0]!.name])
  })
}

t.test('postgres: instances starting together migrate once (advisory lock)', { skip: !databaseKinds().includes('postgres') }, async (t) => {
  const { database } = await freshDatabase(t, 'postgres')
  const instances = await Promise.all(Array.from({ length: 4 }, () => openDatabase(database.config)))
  t.teardown(() => Promise.all(instances.map((db) => db.close())))
  const results = await Promise.all(instances.map((db) => migrate(db)))
  const applied = results.flatMap((r) => r.applied)
  t.same(applied, readMigrations().map((m) => m.name), 'each migration applied by exactly one instance')
  const rows = await instances[0]!.withSession((s) => s.query<{ n: number }>('SELECT count(*)::int AS n FROM _prisma_migrations'))
  t.equal(rows[0]!.n, readMigrations().length)
})

t.test('postgres: migrations run on DATABASE_DIRECT_URL, never through the pooled URL', { skip: !databaseKinds().includes('postgres') }, async (t) => {
  const database = await createTestDatabase('postgres')
  const direct = (database.config as { url: string }).url
  // A pooled URL nothing answers on: the migrations' session must not go there.
  const db = await openDatabase({ kind: 'postgres', url: 'postgresql://postgres@127.0.0.1:1/nowhere', pooled: true, directUrl: direct })
  t.teardown(async () => {
    await db.close()
    await database.drop()
  })
  const applied = await migrate(db)
  t.ok(applied.applied.length > 0, 'every migration applied over the direct connection')
})

t.test('the service warns at start when an applied migration file has changed', async (t) => {
  const { database, db } = await freshDatabase(t, databaseKinds()[0]!)
  await migrate(db)
  await db.withSession((s) => s.query("UPDATE _prisma_migrations SET checksum = 'changed'"))
  const lines: { msg: string; migration?: string }[] = []
  const stream = { write: (line: string) => void lines.push(JSON.parse(line)) }
  const app = await buildApp(testConfig({ database: database.config }), { database: db, logger: { level: 'warn', stream } })
  t.teardown(() => app.close())
  t.same(
    lines.map((l) => [l.msg, l.migration]),
    readMigrations().map((m) => ['migration file changed after it was applied', m.name]),
  )
})

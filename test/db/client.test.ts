// The database seam: both databases take the same parameters in and out of a transaction.
import { trace } from '@opentelemetry/api'
import t from 'tap'
import { lsnOf, openDatabase } from '../../src/db/client.js'
import { tracedDatabase } from '../../src/observability/traced-database.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { until } from '../helpers/until.js'

for (const kind of databaseKinds()) {
  t.test(`${kind}: an array of an enum is a parameter in a statement, in a transaction, and in its last statement`, async (t) => {
    const database = await createTestDatabase(kind)
    const db = await openDatabase(database.config)
    t.teardown(async () => {
      await db.close()
      await database.drop()
    })
    await db.query("CREATE TYPE shade AS ENUM ('light', 'dark')", [])
    await db.query('CREATE TABLE paint (shade shade NOT NULL)', [])
    const count = 'SELECT count(*)::int AS n FROM unnest($1::shade[]) AS s WHERE s = ANY($1::shade[])'
    t.same(await db.query(count, [['light', 'dark']]), [{ n: 2 }], 'on its own')
    const inside = await db.transaction(async (tx) => {
      tx.beforeCommit('INSERT INTO paint SELECT unnest($1::shade[])', [['dark', 'light']])
      return tx.query(count, [['dark']])
    })
    t.same(inside, [{ n: 1 }], 'in a transaction')
    t.same(await db.query('SELECT shade::text FROM paint ORDER BY paint.shade', []), [{ shade: 'light' }, { shade: 'dark' }], 'and in the statement sent with its COMMIT')
  })
}

t.test('a read after a write goes where the write is: a replica that has replayed it, else the primary (DESIGN "Scale")', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const database = await createTestDatabase('postgres')
  const url = (database.config as { url: string }).url
  // A server that replays nothing (the primary itself) has every write; one that cannot be reached has none.
  const unreachable = 'postgresql://postgres@127.0.0.1:1/none'
  const db = await openDatabase({ kind: 'postgres', url, replicaUrls: [unreachable, url] })
  const traced = tracedDatabase(db, trace.getTracer('test'))
  t.teardown(async () => {
    await db.close()
    await database.drop()
  })
  t.equal(db.replicated, true)
  const [{ lsn }] = (await db.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn', [])) as [{ lsn: string }]
  const position = lsnOf(lsn)
  await until('the replicas to be polled', async () => (db.replayed() > position ? true : undefined))
  for (const statements of [db.readsAfter(position), traced.readsAfter(position)]) {
    t.same(await statements.query('SELECT 1 AS one', []), [{ one: 1 }], 'read on the server that has the write')
  }
  t.equal(lsnOf('16/B374D848'), 0x16b374d848n, 'a pg_lsn is the byte position it names')

  const embedded = await openDatabase({ kind: 'pglite', dataDir: 'memory://' })
  t.teardown(() => embedded.close())
  t.equal(embedded.replicated, false)
  t.ok(embedded.replayed() > position, 'one connection in the process has every write')
  t.same(await embedded.readsAfter(position).query('SELECT 1 AS one', []), [{ one: 1 }])
})

// The database seam: both databases take the same parameters in and out of a transaction.
import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'

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

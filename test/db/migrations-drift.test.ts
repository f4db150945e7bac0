// The migrated database and schema.prisma must never disagree (DESIGN "Facts about these machines").
import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { databaseFacts, expectedFacts, readDatamodel } from '../helpers/schema-diff.js'

const expected = expectedFacts(readDatamodel())

for (const kind of databaseKinds()) {
  t.test(`${kind}: the migrations build exactly the schema Prisma describes`, async (t) => {
    const database = await createTestDatabase(kind)
    const db = await openDatabase(database.config)
    t.teardown(async () => {
      await db.close()
      await database.drop()
    })
    await migrate(db)
    const actual = await db.withSession(databaseFacts)
    t.same(actual.columns, expected.columns, 'tables, columns, types, nullability, defaults')
    t.same(actual.indexes, expected.indexes, 'primary keys, unique constraints, indexes')
    t.same(actual.foreignKeys, expected.foreignKeys, 'foreign keys and their actions')
    t.same(actual.enums, expected.enums, 'enum types and values')

    // The comparison itself must see drift: change the database by hand and look again.
    await db.withSession((s) => s.exec('CREATE INDEX extra_idx ON products (stock); ALTER TABLE products ALTER COLUMN stock DROP DEFAULT; ALTER TABLE reviews ALTER COLUMN title TYPE text'))
    const drifted = await db.withSession(databaseFacts)
    t.notSame(drifted.indexes, expected.indexes, 'an extra index is drift')
    t.ok(drifted.columns.includes('products.stock integer NOT NULL DEFAULT null'), 'a lost default is drift')
    t.ok(drifted.columns.includes('reviews.title text DEFAULT null'), 'a changed type is drift')
  })
}

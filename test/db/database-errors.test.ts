// Database errors become catalogue errors naming the field, from PostgreSQL's error fields alone:
// pg and PGlite report them alike (the real statements are tested in test/conventions).
import t from 'tap'
import { operatorMessage, translateDatabaseError } from '../../src/db/database-errors.js'

t.test('unique violations: 409 naming the columns of the key', async (t) => {
  const pair = translateDatabaseError({ code: '23505', detail: 'Key (product_id, author_id)=(a, b) already exists.', constraint: 'reviews_product_id_author_id_key', table: 'reviews' })
  t.same(pair?.details, [{ field: 'product_id', reason: 'is already taken' }, { field: 'author_id', reason: 'is already taken' }])
  t.equal(pair?.status, 409)
  const byName = translateDatabaseError({ code: '23505', constraint: 'products_sku_key', table: 'products' })
  t.same(byName?.details, [{ field: 'sku', reason: 'is already taken' }], 'without a detail: the constraint name, less table and suffix')
  const unnamed = translateDatabaseError({ code: '23505' })
  t.match(unnamed?.message, /same unique value/)
})

t.test('a foreign key to a missing row names the field; an unreachable database is 503', async (t) => {
  const orphan = translateDatabaseError({ code: '23503', detail: 'Key (product_id)=(x) is not present in table "products".', table: 'reviews' })
  t.equal(orphan?.code, 'VALIDATION_ERROR')
  t.same(orphan?.details, [{ field: 'product_id', reason: 'refers to an item that does not exist' }])
  for (const error of [{ code: 'ECONNREFUSED' }, { code: '57P01' }, { code: '08006' }, { severity: 'FATAL', code: '55000' }]) {
    const translated = translateDatabaseError(error)
    t.equal(translated?.status, 503, JSON.stringify(error))
    t.equal(translated?.headers?.['retry-after'], '5')
  }
  t.equal(translateDatabaseError(new Error('something else')), undefined, 'anything else stays a 500')
  t.equal(translateDatabaseError('not an object'), undefined)
})

t.test('a delete that rows still refer to is 409; a value out of its column range is 422', async (t) => {
  t.equal(translateDatabaseError({ code: '23001', detail: 'Key (id)=(x) is referenced from table "orders".' })?.code, 'CONFLICT', 'RESTRICT')
  t.equal(translateDatabaseError({ code: '23503', detail: 'Key (id)=(x) is still referenced from table "orders".' })?.code, 'CONFLICT', 'NO ACTION')
  t.equal(translateDatabaseError({ code: '22003' })?.code, 'VALIDATION_ERROR')
})

t.test("an operator reads the database's own words behind a 503, and the fix for a pooler's refusal", async (t) => {
  // What node-postgres reports when PgBouncer 1.18 refuses the connection (test/server-start.test.ts meets the real one).
  const refusal = Object.assign(new Error('unsupported startup parameter: statement_timeout'), { code: '08P01', severity: 'FATAL' })
  const translated = translateDatabaseError(refusal)!
  t.equal(translated.message, 'The service is temporarily unavailable; try again later.', "the client's answer says nothing of it")
  const line = operatorMessage(translated)
  t.match(line, /^unsupported startup parameter: statement_timeout: DATABASE_URL leads to a connection pooler \(PgBouncer\)/)
  t.match(line, /add \?pgbouncer=true to DATABASE_URL .* or list statement_timeout in ignore_startup_parameters in pgbouncer\.ini/)
  const missing = Object.assign(new Error('database "shop" does not exist'), { code: '3D000', severity: 'FATAL' })
  t.equal(operatorMessage(translateDatabaseError(missing)), 'database "shop" does not exist')
  t.equal(operatorMessage(new Error('the embedded database is in use')), 'the embedded database is in use', 'any other error: its message')
  const conflict = translateDatabaseError({ code: '23505', detail: 'Key (sku)=(A) already exists.' })
  t.equal(operatorMessage(conflict), 'An item with the same sku already exists.', "a client's error keeps its own message")
})

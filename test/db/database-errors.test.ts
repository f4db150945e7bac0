// Database errors become catalogue errors naming the field, from PostgreSQL's error fields alone:
// pg and PGlite report them alike (the real statements are tested in test/conventions).
import t from 'tap'
import { translateDatabaseError } from '../../src/db/database-errors.js'

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

// Database errors become catalogue errors naming the field, from Prisma and from the driver alike.
import t from 'tap'
import { translateDatabaseError } from '../../src/db/prisma-errors.js'

const context = { fields: ['id', 'product_id', 'author_id', 'rating', 'sku'] }

t.test('unique violations: 409 naming the columns, whichever driver reported them', async (t) => {
  const fromPg = translateDatabaseError({ code: 'P2002', meta: { driverAdapterError: { cause: { constraint: { index: 'reviews_product_id_author_id_key' } } } } }, context)
  t.same(fromPg?.details, [{ field: 'product_id', reason: 'is already taken' }, { field: 'author_id', reason: 'is already taken' }])
  t.equal(fromPg?.status, 409)
  const fromPglite = translateDatabaseError({ code: 'P2002', meta: { driverAdapterError: { cause: { constraint: { fields: ['sku'] } } } } }, context)
  t.same(fromPglite?.details, [{ field: 'sku', reason: 'is already taken' }])
  const fromDriver = translateDatabaseError({ code: '23505', constraint: 'products_sku_key' }, context)
  t.same(fromDriver?.details, [{ field: 'sku', reason: 'is already taken' }], 'a hand-written statement: SQLSTATE 23505')
})

t.test('a foreign key to a missing row names the field; an unreachable database is 503', async (t) => {
  const orphan = translateDatabaseError({ code: '23503', constraint: 'reviews_product_id_fkey' }, context)
  t.equal(orphan?.code, 'VALIDATION_ERROR')
  t.same(orphan?.details, [{ field: 'product_id', reason: 'refers to an item that does not exist' }])
  for (const error of [{ code: 'ECONNREFUSED' }, { code: '57P01' }, { code: 'P1001' }, { meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } } }]) {
    const translated = translateDatabaseError(error, context)
    t.equal(translated?.status, 503, JSON.stringify(error))
    t.equal(translated?.headers?.['retry-after'], '5')
  }
  t.equal(translateDatabaseError(new Error('something else'), context), undefined, 'anything else stays a 500')
})

t.test('a delete that rows still refer to is 409; a value out of its column range is 422', async (t) => {
  const deleting = { ...context, deleting: true }
  const fromPg = translateDatabaseError({ code: 'P2003', meta: { driverAdapterError: { cause: { constraint: { index: 'orders_user_id_fkey' } } } } }, deleting)
  t.equal(fromPg?.code, 'CONFLICT')
  const fromPglite = translateDatabaseError({ code: 'P2039', meta: { driverAdapterError: { cause: { code: '23001' } } } }, deleting)
  t.equal(fromPglite?.code, 'CONFLICT', 'PGlite: RESTRICT reported as SQLSTATE 23001 only')
  t.equal(translateDatabaseError({ code: 'P2039', meta: { driverAdapterError: { cause: { code: '42P01' } } } }, context), undefined, 'other P2039s stay 500s')
  const range = translateDatabaseError({ code: '22003' }, context)
  t.equal(range?.code, 'VALIDATION_ERROR')
})

// A typed client: openapi-fetch on the types generated from the newest version's document
// (openapi/v2.d.ts, `npm run openapi`), as docs/how-to/typed-client.md shows it. It type-checks
// only while the document says what these calls send and read.
import createClient from 'openapi-fetch'
import t from 'tap'
import type { components, paths } from '../../openapi/v2.js'
import { eachDatabase } from '../helpers/api.js'

type ErrorBody = components['schemas']['Error']

eachDatabase(t, async (t, api) => {
  const { token } = await api.newUser({ roles: ['admin'] })
  // JSON answers: a list also answers CSV and NDJSON (an export), which a typed client does not read.
  const shop = createClient<paths, 'application/json'>({ baseUrl: api.origin, headers: { authorization: `Bearer ${token}` } })
  const anonymous = createClient<paths, 'application/json'>({ baseUrl: api.origin })
  // One body answers one product; the type says it may be an array (the answer to an array).
  const one = <T>(data: T | T[] | undefined): T | undefined => (Array.isArray(data) ? undefined : data)
  const create = async (name: string, sku: string, amount: number, tags: string[]) => {
    const { data, error, response } = await shop.POST('/api/v2/products', { body: { name, sku, price: { amount }, tags } })
    return { data: one(data), error, response }
  }

  const teapot = await create('Teapot', 'TYPED-001', 24.5, ['typed'])
  await create('Kettle', 'TYPED-002', 8, ['typed'])
  await create('Mug', 'TYPED-003', 12, ['typed'])
  await create('Plate', 'TYPED-004', 30, [])
  const id = teapot.data?.id ?? ''

  t.test('create: 201, Location, the product as a typed body', async (t) => {
    t.equal(teapot.response.status, 201)
    t.equal(teapot.response.headers.get('location'), `/api/v2/products/${id}`)
    t.match(teapot.data, { name: 'Teapot', sku: 'TYPED-001', price: { amount: 24.5, currency: 'USD' }, stock: 0, status: 'draft', tags: ['typed'] })
  })

  t.test('create with only the required fields: the types leave out what has a default', async (t) => {
    // Typed with openapi-typescript's defaults (defaultNonNullable): a body without stock, status
    // and tags compiles only while the document marks no default a body's field has as present.
    const body: components['schemas']['ProductCreate'] = { name: 'Saucer', sku: 'TYPED-007', price: { amount: 6 } }
    const { data, response } = await shop.POST('/api/v2/products', { body })
    t.equal(response.status, 201)
    t.match(data, { name: 'Saucer', stock: 0, status: 'draft' }, 'the service fills in the defaults')
    t.same(one(data)?.tags, [])
  })

  t.test('create several: an array of bodies, an array of products in their order', async (t) => {
    const { data, response } = await shop.POST('/api/v2/products', { body: [{ name: 'Cup', sku: 'TYPED-008', price: { amount: 4 } }, { name: 'Bowl', sku: 'TYPED-009', price: { amount: 5 } }] })
    t.equal(response.status, 201)
    t.same(Array.isArray(data) ? data.map((product) => product.sku) : data, ['TYPED-008', 'TYPED-009'])
  })

  t.test('a batch: operations and their results, typed', async (t) => {
    const { data, response } = await shop.POST('/api/v2/batch', {
      body: { operations: [{ method: 'POST', path: '/products', body: { name: 'Jug', sku: 'TYPED-010', price: { amount: 7 } } }, { method: 'GET', path: '/products/{$0.id}' }] },
    })
    t.equal(response.status, 200)
    t.same(data?.results.map((result) => result.status), [201, 200])
  })

  t.test('a change by filter: the filters, Prefer: max-affected and the patch, typed', async (t) => {
    const { data, response } = await shop.PATCH('/api/v2/products', {
      params: { query: { sku: 'TYPED-010' }, header: { Prefer: 'max-affected=1' } },
      body: { stock: 4 },
      headers: { 'content-type': 'application/merge-patch+json' },
    })
    t.equal(response.status, 200)
    t.same(data?.map((product) => product.sku), ['TYPED-010'])
    const removed = await shop.DELETE('/api/v2/products', { params: { query: { sku: 'TYPED-010' }, header: { Prefer: 'max-affected=1' } } })
    t.equal(removed.response.status, 204)
  })

  t.test('upsert: on_conflict and Prefer are typed parameters', async (t) => {
    const { data, response } = await shop.POST('/api/v2/products', {
      params: { query: { on_conflict: 'sku' }, header: { Prefer: 'resolution=merge-duplicates' } },
      body: { name: 'Cup, larger', sku: 'TYPED-008', price: { amount: 4.5 } },
    })
    t.equal(response.status, 200)
    t.match(one(data), { name: 'Cup, larger', price: { amount: 4.5 } })
  })

  t.test('read: the typed fields of one product', async (t) => {
    const { data, response } = await anonymous.GET('/api/v2/products/{id}', { params: { path: { id } } })
    t.equal(response.status, 200)
    t.ok(response.headers.get('etag'))
    t.equal(data?.price.amount, 24.5)
    t.equal(data?.price.currency, 'USD')
    t.equal(data?.review_count, 0)
    t.equal(data?.rating_average, null)
  })

  t.test('list: a filter and a sort as typed query parameters', async (t) => {
    const { data, response } = await anonymous.GET('/api/v2/products', {
      params: { query: { tags: 'typed', 'price[gte]': '10', sort: 'price', order: 'desc' } },
    })
    t.equal(response.status, 200)
    t.equal(response.headers.get('x-total-count'), '2')
    t.same(data?.map((product) => [product.name, product.price.amount]), [['Teapot', 24.5], ['Mug', 12]])
  })

  t.test('PATCH: a JSON merge patch changes only the fields it names', async (t) => {
    const read = await shop.GET('/api/v2/products/{id}', { params: { path: { id } } })
    const { data, response } = await shop.PATCH('/api/v2/products/{id}', {
      params: { path: { id }, header: { 'If-Match': read.response.headers.get('etag') ?? '' } },
      body: { stock: 3, description: 'Holds a litre.' },
      headers: { 'content-type': 'application/merge-patch+json' },
    })
    t.equal(response.status, 200)
    t.not(response.headers.get('etag'), read.response.headers.get('etag'))
    t.match(data, { name: 'Teapot', price: { amount: 24.5 }, stock: 3, description: 'Holds a litre.', tags: ['typed'] })
    const stale = await shop.PATCH('/api/v2/products/{id}', {
      params: { path: { id }, header: { 'If-Match': read.response.headers.get('etag') ?? '' } },
      body: { stock: 4 },
      headers: { 'content-type': 'application/merge-patch+json' },
    })
    t.equal(stale.response.status, 412, 'the typed If-Match header is sent: the tag read before the change no longer holds')
  })

  t.test('an error answer: the error body, typed', async (t) => {
    const { data, error, response } = await anonymous.POST('/api/v2/products', { body: { name: 'Free', sku: 'TYPED-005', price: { amount: 0 } } })
    const body: ErrorBody | undefined = error
    t.equal(response.status, 401)
    t.ok(response.headers.get('www-authenticate'))
    t.equal(data, undefined)
    t.equal(body?.error.code, 'UNAUTHENTICATED')
    t.same(body?.error.details, [])
  })

  t.test('what the types cannot say: a bound the server checks', async (t) => {
    const { error, response } = await create('Discount', 'TYPED-006', -1, [])
    t.equal(response.status, 422)
    t.equal(error?.error.code, 'VALIDATION_ERROR')
    t.same(error?.error.details.map((detail) => detail.field), ['price.amount'])
  })
})

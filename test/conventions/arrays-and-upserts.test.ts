// Writing many (DESIGN "Writing many"): POST of a JSON array, all or nothing; upserts with
// Prefer: resolution and on_conflict.
import t from 'tap'
import { eachDatabase, startApi, testConfig, V1 } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'
import { eventsAfter, lastEvent } from '../helpers/feed.js'

const V2 = '/api/v2'

t.test('POST of an array creates every item in order: 201, the items as a create answers them, one event each', (t) =>
  eachDatabase(t, async (t, api) => {
    const before = await lastEvent(api)
    const bodies = [productBody({ name: 'First', stock: 3 }), productBody({ name: 'Second', tags: ['a', 'b'] }), productBody({ name: 'Third', cost: 2.5 })]
    const created = await api.admin.post(`${V1}/products`, bodies)
    t.equal(created.status, 201)
    t.equal(created.headers.get('location'), null, 'no Location: there are several')
    t.same(created.body.map((item: { name: string }) => item.name), ['First', 'Second', 'Third'], 'in the order sent')
    t.match(created.body[0], { ...bodies[0], status: 'draft', review_count: 0, rating_average: null, cost: null })
    t.same(created.body[1].tags, ['a', 'b'])
    t.equal(created.body[2].cost, 2.5)
    for (const item of created.body) t.same((await api.admin.get(`${V1}/products/${item.id}`)).body, item, 'as read back')
    t.same(await eventsAfter(api, before), created.body.map((item: { id: string }) => `products.created ${item.id}`), 'one event per item, in order')
    // A version's view applies to every item.
    const v2 = await api.admin.post(`${V2}/products`, [productBody({ price: { amount: 7.5, currency: 'USD' } })])
    t.equal(v2.status, 201)
    t.same(v2.body[0].price, { amount: 7.5, currency: 'USD' })
  }),
)

t.test('one bad item fails the whole array: its index names it, and nothing is written', (t) =>
  eachDatabase(t, async (t, api) => {
    const before = await lastEvent(api)
    const invalid = await api.admin.post(`${V1}/products`, [productBody(), productBody({ price: -1, sku: 'bad sku' }), productBody(), productBody({ extra: 1 })])
    t.equal(invalid.status, 422)
    t.equal(invalid.body.error.code, 'VALIDATION_ERROR')
    t.same(invalid.body.error.details.map((d: { field: string }) => d.field).sort(), ['[1].price', '[1].sku', '[3].extra'])
    const readOnly = await api.admin.post(`${V1}/products`, [productBody(), productBody({ review_count: 3 })])
    t.same(readOnly.body.error.details, [{ field: '[1].review_count', reason: 'is read-only' }])
    const taken = await api.admin.post(`${V1}/products`, productBody({ sku: 'TAKEN-1' }))
    t.equal(taken.status, 201)
    const duplicate = await api.admin.post(`${V1}/products`, [productBody(), productBody({ sku: 'TAKEN-1' })])
    t.equal(duplicate.status, 409)
    t.same(duplicate.body.error.details, [{ field: '[1].sku', reason: 'is already taken' }], 'the item whose sku another holds')
    const twice = await api.admin.post(`${V1}/products`, [productBody({ sku: 'TWICE-1' }), productBody(), productBody({ sku: 'TWICE-1' })])
    t.equal(twice.status, 409)
    t.same(twice.body.error.details, [{ field: '[2].sku', reason: 'is already taken' }], 'the second of two with one sku')
    t.equal((await api.admin.get(`${V1}/products`)).body.length, 1, 'only the single create stored anything')
    t.equal((await eventsAfter(api, before)).length, 1, 'and only its event')
  }),
)

t.test('the caps: BULK_MAX_ITEMS (413), at least one item (422), the body limit (413); rules as for one item', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { limits: { ...testConfig().limits, bulkMaxItems: 3 } } })
  const tooMany = await api.admin.post(`${V1}/products`, [productBody(), productBody(), productBody(), productBody()])
  t.equal(tooMany.status, 413)
  t.equal(tooMany.body.error.code, 'PAYLOAD_TOO_LARGE')
  t.match(tooMany.body.error.message, /at most 3 items; this one has 4/)
  t.equal((await api.admin.post(`${V1}/products`, [productBody(), productBody(), productBody()])).status, 201, 'three is allowed')
  const none = await api.admin.post(`${V1}/products`, [])
  t.equal(none.status, 422)
  t.same(none.body.error.details, [{ field: 'body', reason: 'must have at least 1 item' }])
  const huge = await api.admin.post(`${V1}/products`, [productBody({ description: 'x'.repeat(10_000) })].concat(Array.from({ length: 2 }, () => productBody({ description: 'y'.repeat(600_000) }))))
  t.equal(huge.status, 413, 'past the body limit')
  const customer = await api.newUser()
  t.equal((await customer.api.post(`${V1}/products`, [productBody()])).status, 403, 'who may not create one may not create several')
  t.equal((await api.anonymous.post(`${V1}/products`, [productBody()])).status, 401)
  t.equal((await api.admin.get(`${V1}/products`)).body.length, 3)
})

t.test('arrays under fields=, Prefer: return=minimal, an Idempotency-Key, in a nested collection with a hook', (t) =>
  eachDatabase(t, async (t, api) => {
    const fields = await api.admin.post(`${V1}/products?fields=sku`, [productBody({ sku: 'F-1' }), productBody({ sku: 'F-2' })])
    t.same(fields.body.map((item: object) => Object.keys(item)), [['id', 'sku'], ['id', 'sku']])
    const minimal = await api.admin.post(`${V1}/products`, [productBody()], { prefer: 'return=minimal' })
    t.equal(minimal.status, 201)
    t.equal(minimal.text, '')
    t.equal(minimal.headers.get('preference-applied'), 'return=minimal')
    const key = { 'idempotency-key': 'array-1' }
    const bodies = [productBody({ sku: 'KEY-1', status: 'active' }), productBody({ sku: 'KEY-2', status: 'active' })]
    const first = await api.admin.post(`${V1}/products`, bodies, key)
    t.equal(first.status, 201)
    const again = await api.admin.post(`${V1}/products`, bodies, key)
    t.equal(again.headers.get('idempotent-replayed'), 'true')
    t.same(again.body, first.body, 'the same answer, nothing written twice')
    // Order items: nested, and a hook sets each one's price from its product.
    const product = first.body[0]
    const customer = await api.newUser()
    const order = await customer.api.post(`${V1}/orders`, {})
    const items = await customer.api.post(`${V1}/orders/${order.body.id}/items`, [{ product_id: product.id, quantity: 2 }, { product_id: first.body[1].id, quantity: 1 }])
    t.equal(items.status, 201)
    t.same(items.body.map((item: { quantity: number }) => item.quantity), [2, 1])
    t.equal(items.body[0].unit_price, product.price, 'the hook ran for each item')
    const refused = await customer.api.post(`${V1}/orders/${order.body.id}/items`, [{ product_id: product.id, quantity: 1 }, { product_id: '01890000-0000-7000-8000-000000000000', quantity: 1 }])
    t.equal(refused.status, 422)
    t.equal(refused.body.error.details[0].field, '[1].product_id', "the hook's error names the item")
    t.equal((await customer.api.get(`${V1}/orders/${order.body.id}/items`)).body.length, 2, 'the refused array added nothing')
    const other = await api.newUser()
    t.equal((await other.api.post(`${V1}/orders/${order.body.id}/items`, [{ product_id: product.id, quantity: 1 }])).status, 403, "not into another's order")
  }),
)

t.test('upserts: merge-duplicates changes the item that holds the value, as a PATCH would; ignore-duplicates leaves it', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/products?on_conflict=sku`, productBody({ sku: 'UP-1', name: 'Cup', stock: 5 }), { prefer: 'resolution=merge-duplicates' })
    t.equal(created.status, 201, 'none held it: created')
    t.equal(created.headers.get('location'), `${V1}/products/${created.body.id}`)
    t.equal(created.headers.get('preference-applied'), 'resolution=merge-duplicates')
    const before = await lastEvent(api)
    const merged = await api.admin.post(`${V1}/products?on_conflict=sku`, { sku: 'UP-1', name: 'Big cup', price: 12 }, { prefer: 'resolution=merge-duplicates' })
    t.equal(merged.status, 200, 'changed')
    t.equal(merged.body.id, created.body.id)
    t.match(merged.body, { name: 'Big cup', price: 12, stock: 5 }, 'what the body leaves out stays')
    t.equal(merged.headers.get('content-location'), `${V1}/products/${created.body.id}`)
    t.ok(merged.headers.get('etag'))
    t.same(await eventsAfter(api, before), [`products.updated ${created.body.id}`])
    const same = await api.admin.post(`${V1}/products?on_conflict=sku`, { sku: 'UP-1', name: 'Big cup', price: 12 }, { prefer: 'resolution=merge-duplicates' })
    t.equal(same.status, 200)
    t.equal((await eventsAfter(api, before)).length, 1, 'a merge that changes nothing records nothing')
    const ignored = await api.admin.post(`${V1}/products?on_conflict=sku`, { sku: 'UP-1', name: 'Ignored', price: 1 }, { prefer: 'resolution=ignore-duplicates' })
    t.equal(ignored.status, 200)
    t.equal(ignored.body.name, 'Big cup', 'left as it is')
    t.equal(ignored.headers.get('preference-applied'), 'resolution=ignore-duplicates')
    const many = await api.admin.post(`${V1}/products?on_conflict=sku`, [{ sku: 'UP-1', name: 'Cup again', price: 12 }, productBody({ sku: 'UP-2' })], { prefer: 'resolution=merge-duplicates' })
    t.equal(many.status, 200, 'not every item was created')
    t.same(many.body.map((item: { sku: string; name: string }) => `${item.sku} ${item.name}`), ['UP-1 Cup again', `UP-2 ${many.body[1].name}`])
    t.same((await eventsAfter(api, before)).slice(1), [`products.updated ${created.body.id}`, `products.created ${many.body[1].id}`], 'events say which')
    const allNew = await api.admin.post(`${V1}/products?on_conflict=sku`, [productBody({ sku: 'UP-3' })], { prefer: 'resolution=ignore-duplicates' })
    t.equal(allNew.status, 201)
  }),
)

t.test('an upsert keeps the rules: its parameters, the field rules, who may change, the state machine', (t) =>
  eachDatabase(t, async (t, api) => {
    const missing = await api.admin.post(`${V1}/products?on_conflict=sku`, productBody())
    t.equal(missing.status, 400)
    t.same(missing.body.error.details, [{ field: 'Prefer', reason: 'must state resolution=merge-duplicates or resolution=ignore-duplicates with on_conflict' }])
    const unknown = await api.admin.post(`${V1}/products?on_conflict=name`, productBody(), { prefer: 'resolution=merge-duplicates' })
    t.equal(unknown.status, 400)
    t.same(unknown.body.error.details, [{ field: 'on_conflict', reason: 'must be sku' }])
    const elsewhere = await api.admin.post(`${V1}/webhooks?on_conflict=url`, {}, { prefer: 'resolution=merge-duplicates' })
    t.equal(elsewhere.status, 400, 'a collection without unique fields takes no on_conflict')
    t.equal((await api.admin.post(`${V1}/products`, productBody(), { prefer: 'resolution=merge-duplicates' })).status, 201, 'a resolution alone is ignored')
    const customer = await api.newUser()
    t.equal((await customer.api.post(`${V1}/products?on_conflict=sku`, productBody(), { prefer: 'resolution=merge-duplicates' })).status, 403)
    // Orders: an order's state moves only by its machine; an upsert of a product moves nothing.
    const product = await api.admin.post(`${V1}/products`, productBody({ sku: 'RULE-1', status: 'active' }))
    t.equal(product.status, 201)
    const archived = await api.admin.post(`${V1}/products?on_conflict=sku`, { sku: 'RULE-1', status: 'archived' }, { prefer: 'resolution=merge-duplicates' })
    t.equal(archived.status, 422, 'a merge is validated as the create body it is: name and price are required')
  }),
)

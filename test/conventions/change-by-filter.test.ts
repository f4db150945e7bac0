// PATCH and DELETE on a collection path with filters (DESIGN "Writing many"): admins only, a
// filter and Prefer: max-affected required, nothing changed past N.
import t from 'tap'
import { eachDatabase, startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'
import { eventsAfter, lastEvent } from '../helpers/feed.js'

/** Three products, two of them tagged `sale`. */
async function catalogue(api: Api) {
  const created = await api.admin.post(`${V1}/products`, [productBody({ tags: ['sale'], stock: 1 }), productBody({ tags: ['sale'], stock: 2 }), productBody({ stock: 3 })])
  return created.body as { id: string; stock: number }[]
}

const stocks = async (api: Api) => ((await api.admin.get(`${V1}/products?fields=stock&sort=created_at`)).body as { stock: number }[]).map((p) => p.stock)

t.test('PATCH by filter changes every match as a PATCH of it would: 200 with their summaries, an event each', (t) =>
  eachDatabase(t, async (t, api) => {
    const [a, b] = await catalogue(api)
    const before = await lastEvent(api)
    const changed = await api.admin.patch(`${V1}/products?tags=sale`, { stock: 9 }, { prefer: 'max-affected=2' })
    t.equal(changed.status, 200)
    t.equal(changed.headers.get('preference-applied'), 'max-affected=2')
    t.same(changed.body.map((item: { id: string }) => item.id), [a!.id, b!.id], 'the matches, by id')
    t.same(Object.keys(changed.body[0]).sort(), ['id', 'name', 'price', 'sku', 'status'], 'as a list shows them')
    t.same(await stocks(api), [9, 9, 3])
    t.same(await eventsAfter(api, before), [`products.updated ${a!.id}`, `products.updated ${b!.id}`])
    const again = await api.admin.patch(`${V1}/products?filter=${encodeURIComponent('stock >= 9 OR stock = 3')}&fields=stock`, { stock: 9 }, { prefer: 'max-affected=5' })
    t.same(again.body.map((item: object) => Object.keys(item)), [['id', 'stock'], ['id', 'stock'], ['id', 'stock']], 'fields= and filter= as on a list')
    t.equal((await eventsAfter(api, before)).length, 3, 'an item the patch does not change records nothing')
    const invalid = await api.admin.patch(`${V1}/products?tags=sale`, { stock: -1 }, { prefer: 'max-affected=2' })
    t.equal(invalid.status, 422, 'the body is checked as an item PATCH checks it')
  }),
)

t.test('more matches than max-affected: 400 TOO_MANY_AFFECTED, and nothing changes', (t) =>
  eachDatabase(t, async (t, api) => {
    await catalogue(api)
    const before = await lastEvent(api)
    const patch = await api.admin.patch(`${V1}/products?stock[gte]=1`, { stock: 0 }, { prefer: 'max-affected=2' })
    t.equal(patch.status, 400)
    t.equal(patch.body.error.code, 'TOO_MANY_AFFECTED')
    t.same(patch.body.error.details, [{ field: 'Prefer', reason: 'max-affected=2, and more items match' }])
    const remove = await api.admin.delete(`${V1}/products?stock[gte]=1`, { prefer: 'max-affected=1' })
    t.equal(remove.status, 400)
    t.match(remove.body.error.message, /More than 1 item matches/)
    t.same(await stocks(api), [1, 2, 3], 'nothing changed, nothing deleted')
    t.same(await eventsAfter(api, before), [])
  }),
)

t.test('DELETE by filter: 204, every match gone with its event', (t) =>
  eachDatabase(t, async (t, api) => {
    const [a, b, c] = await catalogue(api)
    const before = await lastEvent(api)
    const removed = await api.admin.delete(`${V1}/products?tags=sale`, { prefer: 'max-affected=10' })
    t.equal(removed.status, 204)
    t.equal(removed.headers.get('preference-applied'), 'max-affected=10')
    t.same(((await api.admin.get(`${V1}/products`)).body as { id: string }[]).map((p) => p.id), [c!.id])
    t.same(await eventsAfter(api, before), [`products.trashed ${a!.id}`, `products.trashed ${b!.id}`])
    const none = await api.admin.delete(`${V1}/products?tags=none`, { prefer: 'max-affected=10' })
    t.equal(none.status, 204, 'no match: nothing to do')
  }),
)

t.test('what a change by filter needs: an admin, a filter, max-affected within BULK_MAX_ITEMS, no paging', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { limits: { ...testConfig().limits, bulkMaxItems: 5 } } })
  await catalogue(api)
  const customer = await api.newUser()
  const cases: [Api, string, string, Record<string, string>, number, string][] = [
    [api.anonymous, 'PATCH', '?tags=sale', { prefer: 'max-affected=2' }, 401, 'UNAUTHENTICATED'],
    [customer.api, 'PATCH', '?tags=sale', { prefer: 'max-affected=2' }, 403, 'FORBIDDEN'],
    [customer.api, 'DELETE', '?tags=sale', { prefer: 'max-affected=2' }, 403, 'FORBIDDEN'],
    [api.admin, 'PATCH', '', { prefer: 'max-affected=2' }, 400, 'INVALID_PARAMETER'],
    [api.admin, 'DELETE', '', { prefer: 'max-affected=2' }, 400, 'INVALID_PARAMETER'],
    [api.admin, 'PATCH', '?tags=sale', {}, 400, 'BAD_REQUEST'],
    [api.admin, 'DELETE', '?tags=sale', { prefer: 'max-affected=0' }, 400, 'BAD_REQUEST'],
    [api.admin, 'DELETE', '?tags=sale', { prefer: 'max-affected=6' }, 400, 'BAD_REQUEST'],
    [api.admin, 'DELETE', '?tags=sale', { prefer: 'max-affected=lots' }, 400, 'BAD_REQUEST'],
    [api.admin, 'PATCH', '?tags=sale&page=2', { prefer: 'max-affected=2' }, 400, 'INVALID_PARAMETER'],
    [api.admin, 'DELETE', '?tags=sale&sort=name', { prefer: 'max-affected=2' }, 400, 'INVALID_PARAMETER'],
    [api.admin, 'DELETE', '?colour=red', { prefer: 'max-affected=2' }, 400, 'INVALID_PARAMETER'],
    [api.admin, 'PATCH', '?filter=stock%20%3E', { prefer: 'max-affected=2' }, 400, 'INVALID_PARAMETER'],
  ]
  for (const [as, method, query, headers, status, code] of cases) {
    const res = await as.request(method, `${V1}/products${query}`, { headers, body: method === 'PATCH' ? { stock: 0 } : undefined })
    t.equal(res.status, status, `${method} ${query} ${JSON.stringify(headers)}`)
    t.equal(res.body.error.code, code)
  }
  t.same(await stocks(api), [1, 2, 3], 'none of them changed anything')
  const order = await customer.api.post(`${V1}/orders`, {})
  const orders = await api.admin.patch(`${V1}/orders?status=pending`, { note: 'x' }, { prefer: 'max-affected=2' })
  t.equal(orders.status, 428, 'a collection whose changes need If-Match is changed one by one')
  t.equal((await api.admin.get(`${V1}/orders/${order.body.id}`)).body.note, null)
})

t.test("each item's rules hold: a hook that refuses one refuses the whole change, naming the item", (t) =>
  eachDatabase(t, async (t, api) => {
    const product = (await api.admin.post(`${V1}/products`, productBody({ status: 'active', stock: 10 }))).body
    const customer = await api.newUser()
    const order = (await customer.api.post(`${V1}/orders`, {})).body
    const items = (await customer.api.post(`${V1}/orders/${order.id}/items`, [{ product_id: product.id, quantity: 1 }, { product_id: product.id, quantity: 2 }])).body
    const path = `${V1}/orders/${order.id}/items?quantity[gte]=1`
    const changed = await api.admin.patch(path, { quantity: 3 }, { prefer: 'max-affected=2' })
    t.equal(changed.status, 200, 'in a nested collection too')
    t.equal((await customer.api.get(`${V1}/orders/${order.id}`)).body.total, 60, "the parent's figures follow")
    const read = await customer.api.get(`${V1}/orders/${order.id}`)
    const paid = await customer.api.patch(`${V1}/orders/${order.id}`, { status: 'paid' }, { 'if-match': read.headers.get('etag')! })
    t.equal(paid.status, 200)
    const refused = await api.admin.patch(path, { quantity: 1 }, { prefer: 'max-affected=2' })
    t.equal(refused.status, 409, 'the items of a paid order do not change')
    t.equal(refused.body.error.code, 'STATE_CONFLICT')
    t.equal(refused.body.error.details[0].field, `items[${items[0].id}]`)
    t.equal((await api.admin.delete(path, { prefer: 'max-affected=2' })).status, 409, 'nor go')
    t.same(((await customer.api.get(`${V1}/orders/${order.id}/items`)).body as { quantity: number }[]).map((item) => item.quantity), [3, 3])
  }),
)

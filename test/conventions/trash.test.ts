// The trash (DESIGN "Data over time"): products declare 30 days. DELETE moves an item there;
// reads, lists, children, relations and filters lose it; admins see it with trashed=; PATCH in
// the trash restores; DELETE in the trash, or housekeeping after the days, deletes for good.
import t from 'tap'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'
import { eventsAfter, lastEvent } from '../helpers/feed.js'
import { purgeExpiredTrash, trashStores } from '../../src/resources/trash.js'
import { products } from '../../src/collections/products/index.js'

async function product(api: Api, overrides: Record<string, unknown> = {}) {
  const created = await api.admin.post(`${V1}/products`, productBody({ status: 'active', ...overrides }))
  return created.body as { id: string; sku: string; updated_at: string }
}

const ids = (body: unknown) => (body as { id: string }[]).map((item) => item.id)

t.test('DELETE moves a product to the trash: gone from reads and lists, its event trashed', (t) =>
  eachDatabase(t, async (t, api) => {
    const kept = await product(api)
    const gone = await product(api)
    const page = await api.anonymous.get(`${V1}/products`)
    const before = await lastEvent(api)
    const removed = await api.admin.delete(`${V1}/products/${gone.id}`)
    t.equal(removed.status, 204)
    t.equal((await api.anonymous.get(`${V1}/products`, { 'if-none-match': page.headers.get('etag')! })).status, 200, 'a page that had it is not current')
    t.equal((await api.anonymous.get(`${V1}/products/${gone.id}`)).status, 404, 'a read: 404')
    t.equal((await api.admin.get(`${V1}/products/${gone.id}`)).status, 404, 'an admin\'s read too, without trashed=')
    const list = await api.admin.get(`${V1}/products`)
    t.same(ids(list.body), [kept.id], 'a list loses it')
    t.equal(list.headers.get('x-total-count'), '1', 'and counts live items only')
    t.same((await api.admin.get(`${V1}/products/aggregates?metrics=count`)).body, [{ count: 1 }], 'so do aggregates')
    t.same((await api.admin.get(`${V1}/products/aggregates?metrics=count&trashed=include`)).body, [{ count: 2 }], 'unless an admin asks')
    const ndjson = { accept: 'application/x-ndjson' }
    const exported = await api.admin.get(`${V1}/products?fields=sku`, ndjson)
    t.same(exported.text.trim().split('\n').map((line) => JSON.parse(line).id), [kept.id], 'an export leaves it out')
    const trash = await api.admin.get(`${V1}/products?fields=sku&trashed=only`, ndjson)
    t.match(JSON.parse(trash.text.trim()), { id: gone.id, deleted_at: String }, 'an export of the trash has it')
    t.equal((await api.admin.delete(`${V1}/products/${gone.id}`)).status, 404, 'a second DELETE: 404, it is no longer live')
    t.equal((await api.admin.patch(`${V1}/products/${gone.id}`, { stock: 1 })).status, 404, 'a PATCH without trashed=: 404')
    t.equal((await api.admin.put(`${V1}/products/${gone.id}`, productBody())).status, 404, 'a PUT: 404')
    t.same(await eventsAfter(api, before), [`products.trashed ${gone.id}`])
    const feed = await api.admin.get(`${V1}/events?after=${before}`)
    t.match(feed.body[0].data, { id: gone.id, sku: gone.sku, deleted_at: String }, 'the event holds the item as trashed, with deleted_at')
  }),
)

t.test('admins see the trash with trashed=only or include; others may not', (t) =>
  eachDatabase(t, async (t, api) => {
    const live = await product(api)
    const gone = await product(api)
    await api.admin.delete(`${V1}/products/${gone.id}`)
    const only = await api.admin.get(`${V1}/products?trashed=only`)
    t.equal(only.status, 200)
    t.same(ids(only.body), [gone.id])
    t.match(only.body[0], { id: gone.id, deleted_at: String }, 'a trashed item shows deleted_at')
    t.equal(only.headers.get('x-total-count'), '1')
    const both = await api.admin.get(`${V1}/products?trashed=include&sort=created_at`)
    t.same(ids(both.body), [live.id, gone.id])
    t.notOk('deleted_at' in both.body[0], 'a live item has no deleted_at')
    const read = await api.admin.get(`${V1}/products/${gone.id}?trashed=only`)
    t.equal(read.status, 200)
    t.ok(Date.parse(read.body.deleted_at) <= Date.now())
    t.equal((await api.admin.get(`${V1}/products/${live.id}?trashed=only`)).status, 404, 'a live item is not in the trash')
    t.equal((await api.admin.get(`${V1}/products/${live.id}?trashed=include`)).status, 200)
    t.equal((await api.anonymous.get(`${V1}/products/${gone.id}/history`)).status, 404, 'its history is gone with it')
    const history = await api.admin.get(`${V1}/products/${gone.id}/history?trashed=only`)
    t.equal(history.status, 200, 'admins read it in the trash')
    t.same(history.body.map((entry: { type: string }) => entry.type), ['products.trashed', 'products.created'])
    const filtered = await api.admin.get(`${V1}/products?trashed=only&sku=${gone.sku}&fields=sku`)
    t.same(filtered.body, [{ id: gone.id, sku: gone.sku, deleted_at: read.body.deleted_at }], 'filters and fields= apply in the trash')
    const customer = await api.newUser()
    const refused = await customer.api.get(`${V1}/products?trashed=only`)
    t.equal(refused.status, 403)
    t.equal(refused.body.error.code, 'FORBIDDEN')
    t.equal((await api.anonymous.get(`${V1}/products/${gone.id}?trashed=only`)).status, 401, 'anonymous: sign in first')
    const invalid = await api.admin.get(`${V1}/products?trashed=yes`)
    t.equal(invalid.status, 400)
    t.same(invalid.body.error.details, [{ field: 'trashed', reason: 'must be only or include' }])
    const noTrash = await api.admin.get(`${V1}/orders?trashed=only`)
    t.equal(noTrash.status, 400)
    t.match(noTrash.body.error.details[0].reason, /orders keep no trash/)
  }),
)

t.test('PATCH ?trashed=only {"deleted_at": null} restores; nothing else changes an item in the trash', (t) =>
  eachDatabase(t, async (t, api) => {
    const item = await product(api, { stock: 4 })
    await api.admin.delete(`${V1}/products/${item.id}`)
    const trashed = await api.admin.get(`${V1}/products/${item.id}?trashed=only`)
    const before = await lastEvent(api)
    const other = await api.admin.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: null, stock: 9 })
    t.equal(other.status, 422)
    t.same(other.body.error.details, [{ field: 'stock', reason: 'cannot change while the item is in the trash; restore it first' }])
    t.equal((await api.admin.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: '2020-01-01T00:00:00Z' })).status, 422)
    const stale = await api.admin.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: null }, { 'if-match': '"v1-0-stale"' })
    t.equal(stale.status, 412, 'If-Match holds in the trash too')
    const customer = await api.newUser()
    t.equal((await customer.api.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: null })).status, 403)
    const restored = await api.admin.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: null }, { 'if-match': trashed.headers.get('etag')! })
    t.equal(restored.status, 200)
    t.equal(restored.body.stock, 4, 'the item as it was')
    t.notOk('deleted_at' in restored.body)
    t.ok(restored.body.updated_at > trashed.body.updated_at, 'updated_at moves')
    t.equal((await api.anonymous.get(`${V1}/products/${item.id}`)).status, 200, 'live again')
    t.equal((await api.admin.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: null })).status, 404, 'no longer in the trash')
    t.same(await eventsAfter(api, before), [`products.restored ${item.id}`])
    const put = await api.admin.put(`${V1}/products/${item.id}?trashed=only`, productBody())
    t.equal(put.status, 400, 'PUT takes no trashed=')
    t.match(put.body.error.details[0].reason, /PATCH/)
  }),
)

t.test('DELETE ?trashed=only deletes for good; a live item cannot be deleted so', (t) =>
  eachDatabase(t, async (t, api) => {
    const item = await product(api)
    t.equal((await api.admin.delete(`${V1}/products/${item.id}?trashed=only`)).status, 404, 'a live item is not in the trash')
    await api.admin.delete(`${V1}/products/${item.id}`)
    const before = await lastEvent(api)
    t.equal((await api.admin.delete(`${V1}/products/${item.id}?trashed=only`)).status, 204)
    t.equal((await api.admin.get(`${V1}/products/${item.id}?trashed=include`)).status, 404, 'gone from the trash as well')
    t.same(await eventsAfter(api, before), [`products.deleted ${item.id}`])
    t.equal((await api.admin.post(`${V1}/products`, productBody({ sku: item.sku }))).status, 201, 'its sku is free again')
  }),
)

t.test('a trashed item keeps its unique values: the 409 says where the holder is', (t) =>
  eachDatabase(t, async (t, api) => {
    const item = await product(api)
    await api.admin.delete(`${V1}/products/${item.id}`)
    const again = await api.admin.post(`${V1}/products`, productBody({ sku: item.sku }))
    t.equal(again.status, 409)
    t.same(again.body.error.details, [{ field: 'sku', reason: 'is held by an item in the trash' }])
    t.match(again.body.error.message, new RegExp(`belongs to an item in the trash: restore it \\(PATCH /api/v1/products/${item.id}\\?trashed=only`))
    const many = await api.admin.post(`${V1}/products`, [productBody(), productBody({ sku: item.sku })])
    t.equal(many.status, 409, 'in an array too, naming the item')
    t.same(many.body.error.details, [{ field: '[1].sku', reason: 'is held by an item in the trash' }])
    const other = await product(api)
    const patch = await api.admin.patch(`${V1}/products/${other.id}`, { sku: item.sku })
    t.equal(patch.status, 409, 'and a change to it')
    t.same(patch.body.error.details, [{ field: 'sku', reason: 'is held by an item in the trash' }])
    const upsert = await api.admin.post(`${V1}/products?on_conflict=sku`, productBody({ sku: item.sku }), { prefer: 'resolution=merge-duplicates' })
    t.equal(upsert.status, 409, 'an upsert does not reach into the trash')
    t.same(upsert.body.error.details, [{ field: 'sku', reason: 'is held by an item in the trash' }])
    const live = await product(api)
    const taken = await api.admin.post(`${V1}/products`, productBody({ sku: live.sku }))
    t.same(taken.body.error.details, [{ field: 'sku', reason: 'is already taken' }], 'a live holder is the plain conflict')
  }),
)

t.test('children and relations lose a trashed product', (t) =>
  eachDatabase(t, async (t, api) => {
    const item = await product(api)
    const reviewer = await api.newUser()
    const review = await reviewer.api.post(`${V1}/products/${item.id}/reviews`, { rating: 5, title: 'Good' })
    t.equal(review.status, 201)
    const order = await reviewer.api.post(`${V1}/orders`, {})
    const line = await reviewer.api.post(`${V1}/orders/${order.body.id}/items`, { product_id: item.id, quantity: 1 })
    t.equal(line.status, 201)
    await api.admin.delete(`${V1}/products/${item.id}`)
    t.equal((await api.anonymous.get(`${V1}/products/${item.id}/reviews`)).status, 404, 'its reviews are gone with it')
    t.equal((await api.anonymous.get(`${V1}/products/${item.id}/reviews/${review.body.id}`)).status, 404)
    t.equal((await reviewer.api.post(`${V1}/products/${item.id}/reviews`, { rating: 4 })).status, 404, 'nothing is added below it')
    t.equal((await reviewer.api.patch(`${V1}/products/${item.id}/reviews/${review.body.id}`, { rating: 1 })).status, 404, 'nor changed')
    t.equal((await reviewer.api.delete(`${V1}/products/${item.id}/reviews/${review.body.id}`)).status, 404, 'nor deleted')
    const embedded = await reviewer.api.get(`${V1}/orders/${order.body.id}/items?include=product`)
    t.equal(embedded.body[0].product, null, 'an order item embeds no trashed product')
    const through = await reviewer.api.get(`${V1}/orders/${order.body.id}/items?filter=${encodeURIComponent(`product.sku = "${item.sku}"`)}`)
    t.same(through.body, [], 'nor filters through one')
    const add = await reviewer.api.post(`${V1}/orders/${order.body.id}/items`, { product_id: item.id, quantity: 1 })
    t.equal(add.status, 422, 'nor is one ordered')
    await api.admin.patch(`${V1}/products/${item.id}?trashed=only`, { deleted_at: null })
    t.equal((await api.anonymous.get(`${V1}/products/${item.id}/reviews`)).body.length, 1, 'restored, with its reviews')
  }),
)

t.test('by filter: DELETE moves to the trash, DELETE in the trash deletes, PATCH in the trash restores', (t) =>
  eachDatabase(t, async (t, api) => {
    const a = await product(api, { tags: ['sale'] })
    const b = await product(api, { tags: ['sale'] })
    const before = await lastEvent(api)
    t.equal((await api.admin.delete(`${V1}/products?tags=sale`, { prefer: 'max-affected=5' })).status, 204)
    t.same(ids((await api.admin.get(`${V1}/products?trashed=only&sort=created_at`)).body), [a.id, b.id])
    const restored = await api.admin.patch(`${V1}/products?trashed=only&sku=${a.sku}`, { deleted_at: null }, { prefer: 'max-affected=5' })
    t.equal(restored.status, 200)
    t.same(ids(restored.body), [a.id])
    t.equal((await api.admin.delete(`${V1}/products?trashed=only&tags=sale`, { prefer: 'max-affected=5' })).status, 204)
    t.same(ids((await api.admin.get(`${V1}/products?trashed=include`)).body), [a.id], 'b deleted for good, a live')
    t.same(await eventsAfter(api, before), [`products.trashed ${a.id}`, `products.trashed ${b.id}`, `products.restored ${a.id}`, `products.deleted ${b.id}`])
  }),
)

t.test('housekeeping deletes for good what has been in the trash longer than the days', (t) =>
  eachDatabase(t, async (t, api) => {
    const old = await product(api)
    const recent = await product(api)
    await api.admin.delete(`${V1}/products/${old.id}`)
    await api.admin.delete(`${V1}/products/${recent.id}`)
    // 31 days ago, as if it had been trashed then.
    await api.db.query(`UPDATE products SET deleted_at = now() - interval '31 days' WHERE id = $1`, [old.id])
    const before = await lastEvent(api)
    const stores = trashStores(api.db, [products])
    t.equal(await purgeExpiredTrash(stores), 1)
    t.equal(await purgeExpiredTrash(stores), 0, 'nothing twice')
    t.same(ids((await api.admin.get(`${V1}/products?trashed=only`)).body), [recent.id])
    t.same(await eventsAfter(api, before), [`products.deleted ${old.id}`])
    const feed = await api.admin.get(`${V1}/events?after=${before}`)
    t.equal(feed.body[0].actor_id, null, 'no one did it')
  }),
)

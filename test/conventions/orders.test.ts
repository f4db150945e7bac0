// orders and orders/{id}/items: owner-scoped (BOLA: OWASP API1), priced from the product, the
// total kept by the database, changes only with If-Match (CACHE-12), items only while pending.
import t from 'tap'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

async function activeProduct(api: Api, price: number): Promise<string> {
  return (await api.admin.post(`${V1}/products`, { ...productBody(), price, status: 'active' })).body.id
}

t.test('an order belongs to its creator: others get 403 on every method, anonymous callers 401', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    t.equal((await api.anonymous.post(`${V1}/orders`, {})).status, 401)
    const created = await alice.api.post(`${V1}/orders`, { note: 'Leave at the door' })
    t.equal(created.status, 201)
    t.match(created.body, { user_id: alice.id, status: 'pending', note: 'Leave at the door', total: 0 })
    const path = `${V1}/orders/${created.body.id}`
    const etag = created.headers.get('etag')!

    t.equal((await api.anonymous.get(path)).status, 401)
    for (const res of [
      await bob.api.get(path),
      await bob.api.patch(path, { note: 'mine now' }, { 'if-match': etag }),
      await bob.api.put(path, { note: 'mine now' }, { 'if-match': etag }),
      await bob.api.delete(path, { 'if-match': etag }),
      await bob.api.get(`${path}/items`),
      await bob.api.post(`${path}/items`, { product_id: await activeProduct(api, 1), quantity: 1 }),
    ]) {
      t.equal(res.status, 403, "bob cannot touch alice's order")
      t.equal(res.body.error.code, 'FORBIDDEN')
    }
    t.equal((await alice.api.get(path)).body.note, 'Leave at the door', 'nothing changed')
    t.equal((await api.admin.get(path)).status, 200, 'admins read every order')
    t.equal((await bob.api.get(`${V1}/orders/01890000-0000-7000-8000-000000000000`)).status, 404, 'an unknown order is 404')
  }),
)

t.test('lists are owner-scoped: a user lists only their orders, admins all', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    await alice.api.post(`${V1}/orders`, {})
    await alice.api.post(`${V1}/orders`, {})
    const bobs = (await bob.api.post(`${V1}/orders`, {})).body
    const mine = await bob.api.get(`${V1}/orders`)
    t.same(mine.body.map((o: { id: string }) => o.id), [bobs.id])
    t.equal(mine.headers.get('x-total-count'), '1', 'the total counts only them')
    t.same((await bob.api.get(`${V1}/orders?user_id=${alice.id}`)).body, [], "a filter on another user's id finds nothing")
    const all = await api.admin.get(`${V1}/orders`)
    t.equal(all.headers.get('x-total-count'), '3')
    t.equal((await api.admin.get(`${V1}/orders?user_id=${alice.id}`)).headers.get('x-total-count'), '2')
    t.equal((await api.anonymous.get(`${V1}/orders`)).status, 401)
  }),
)

t.test('changes need If-Match (428); total and owner are read-only; the status moves only by its machine', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const created = await alice.api.post(`${V1}/orders`, {})
    const path = `${V1}/orders/${created.body.id}`
    const required = await alice.api.patch(path, { note: 'x' })
    t.equal(required.status, 428)
    t.equal(required.body.error.code, 'PRECONDITION_REQUIRED')
    t.equal((await alice.api.delete(path)).status, 428, 'a delete too')
    t.equal((await alice.api.patch(path, { note: 'x' }, { 'if-match': '*' })).status, 428, 'If-Match: * names no version')
    const etag = created.headers.get('etag')!
    const patched = await alice.api.patch(path, { note: 'Ring twice' }, { 'if-match': etag })
    t.equal(patched.status, 200)
    t.equal((await alice.api.patch(path, { note: 'Again' }, { 'if-match': etag })).status, 412, 'the old tag no longer matches')
    const readOnly = await alice.api.patch(path, { status: 'shipped', total: 0, user_id: alice.id }, { 'if-match': patched.headers.get('etag')! })
    t.equal(readOnly.status, 422, 'read-only fields: 422 before any move is looked at')
    t.same(readOnly.body.error.details.map((d: { field: string }) => d.field).sort(), ['total', 'user_id'])
    const skipped = await alice.api.patch(path, { status: 'shipped' }, { 'if-match': patched.headers.get('etag')! })
    t.equal(skipped.status, 409, 'pending cannot move to shipped')
    t.equal(skipped.body.error.code, 'INVALID_TRANSITION')
    t.equal((await alice.api.post(`${V1}/orders`, { user_id: alice.id })).status, 422, 'nor set on create')
    t.equal((await alice.api.delete(path, { 'if-match': patched.headers.get('etag')! })).status, 204, 'the owner deletes it')
  }),
)

t.test('items are priced from the product when added; the order total follows every change', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const [tea, pot] = [await activeProduct(api, 4.5), await activeProduct(api, 30)]
    const order = (await alice.api.post(`${V1}/orders`, {})).body
    const orderPath = `${V1}/orders/${order.id}`
    const items = `${orderPath}/items`
    const before = (await alice.api.get(orderPath)).headers.get('etag')

    const first = await alice.api.post(items, { product_id: tea, quantity: 3 })
    t.equal(first.status, 201)
    t.match(first.body, { order_id: order.id, product_id: tea, quantity: 3, unit_price: 4.5 })
    await alice.api.post(items, { product_id: pot, quantity: 1 })
    const withItems = await alice.api.get(orderPath)
    t.equal(withItems.body.total, 43.5, '3 * 4.50 + 30')
    t.not(withItems.headers.get('etag'), before, "the order's ETag follows its total")

    await api.admin.patch(`${V1}/products/${tea}`, { price: 5 })
    t.equal((await alice.api.get(`${items}/${first.body.id}`)).body.unit_price, 4.5, 'a later price change leaves the item alone')
    const moreTea = await alice.api.patch(`${items}/${first.body.id}`, { quantity: 4 })
    t.equal(moreTea.body.unit_price, 4.5, 'and so does a new quantity')
    t.equal((await alice.api.get(orderPath)).body.total, 48)
    const swapped = await alice.api.patch(`${items}/${first.body.id}`, { product_id: pot })
    t.equal(swapped.body.unit_price, 30, 'another product: its price')
    t.equal((await alice.api.delete(`${items}/${first.body.id}`)).status, 204)
    t.equal((await alice.api.get(orderPath)).body.total, 30)
    const priced = await alice.api.post(items, { product_id: tea, quantity: 1, unit_price: 0.01 })
    t.equal(priced.status, 422, 'nobody sets their own price')
    t.same(priced.body.error.details, [{ field: 'unit_price', reason: 'is read-only' }])
    t.equal((await api.admin.get(items)).status, 200, 'admins see any order’s items')
    t.same((await alice.api.get(`/api/v2/orders/${order.id}`)).body.total, { amount: 30, currency: 'USD' }, 'v2 shows amounts as objects')
    t.same((await alice.api.get(`/api/v2/orders/${order.id}/items`)).body[0].unit_price, { amount: 30, currency: 'USD' })
  }),
)

t.test('an item needs an active product and a quantity from 1 to 1000', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const items = `${V1}/orders/${(await alice.api.post(`${V1}/orders`, {})).body.id}/items`
    const draft = (await api.admin.post(`${V1}/products`, productBody())).body.id
    const inactive = await alice.api.post(items, { product_id: draft, quantity: 1 })
    t.equal(inactive.status, 422)
    t.same(inactive.body.error.details, [{ field: 'product_id', reason: 'is not an active product' }])
    const missing = await alice.api.post(items, { product_id: '01890000-0000-7000-8000-000000000000', quantity: 1 })
    t.same(missing.body.error.details, [{ field: 'product_id', reason: 'refers to a product that does not exist' }])
    const product = await activeProduct(api, 1)
    for (const quantity of [0, 1001, 1.5]) t.equal((await alice.api.post(items, { product_id: product, quantity })).status, 422, `quantity ${quantity}`)
    t.same((await alice.api.get(items)).body, [], 'nothing was stored')
    const dear = await activeProduct(api, 9_999_999_999.99)
    t.equal((await alice.api.post(items, { product_id: dear, quantity: 1000 })).status, 201, 'the largest item fits')
    const overflow = await alice.api.post(items, { product_id: dear, quantity: 1000 })
    t.equal(overflow.status, 422, 'a total beyond what is stored is refused, not a 500')
    t.equal((await alice.api.get(items)).headers.get('x-total-count'), '1', 'and the second item was not stored')
  }),
)

t.test("an order's items change only while it is pending (409 STATE_CONFLICT)", (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const product = await activeProduct(api, 2)
    const order = (await alice.api.post(`${V1}/orders`, {})).body
    const items = `${V1}/orders/${order.id}/items`
    const item = (await alice.api.post(items, { product_id: product, quantity: 2 })).body
    // No transition exists yet (the states issue brings them): the test pays the order in SQL.
    await api.db.query("UPDATE orders SET status = 'paid' WHERE id = $1", [order.id])
    for (const res of [
      await alice.api.post(items, { product_id: product, quantity: 1 }),
      await alice.api.patch(`${items}/${item.id}`, { quantity: 5 }),
      await alice.api.delete(`${items}/${item.id}`),
    ]) {
      t.equal(res.status, 409)
      t.equal(res.body.error.code, 'STATE_CONFLICT')
    }
    t.equal((await alice.api.get(`${V1}/orders/${order.id}`)).body.total, 4, 'the total is unchanged')
  }),
)

t.test('deleting an order deletes its items; deleting a product for good keeps the items that had it', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const product = await activeProduct(api, 7)
    const first = await alice.api.post(`${V1}/orders`, {})
    const second = (await alice.api.post(`${V1}/orders`, {})).body
    await alice.api.post(`${V1}/orders/${first.body.id}/items`, { product_id: product, quantity: 1 })
    const kept = (await alice.api.post(`${V1}/orders/${second.id}/items`, { product_id: product, quantity: 2 })).body
    t.equal((await alice.api.delete(`${V1}/orders/${first.body.id}`, { 'if-match': (await alice.api.get(`${V1}/orders/${first.body.id}`)).headers.get('etag')! })).status, 204)
    t.same(await api.db.query('SELECT count(*)::int AS n FROM order_items WHERE order_id = $1', [first.body.id]), [{ n: 0 }])
    const itemPath = `${V1}/orders/${second.id}/items/${kept.id}`
    const before = await alice.api.get(itemPath)
    t.equal((await api.admin.delete(`${V1}/products/${product}`)).status, 204)
    t.equal((await alice.api.get(itemPath)).body.product_id, product, 'in the trash, the product is still the item\'s')
    t.equal((await api.admin.delete(`${V1}/products/${product}?trashed=only`)).status, 204)
    const after = await alice.api.get(itemPath)
    t.match(after.body, { product_id: null, unit_price: 7, quantity: 2 }, 'the item keeps its price')
    t.ok(after.body.updated_at > before.body.updated_at, 'the cleared link moves updated_at')
    t.not(after.headers.get('etag'), before.headers.get('etag'), 'so the ETag follows')
    t.equal((await alice.api.get(`${V1}/orders/${second.id}`)).body.total, 14)
  }),
)

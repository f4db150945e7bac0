// The orders' state machine (DESIGN "States"): moves the machine allows, by whom, with the guard
// and effect of paying and cancelling in the write's transaction, and the events each move records.
import t from 'tap'
import { databaseKinds } from '../helpers/databases.js'
import { eachDatabase, startApi, V1, type Api, type TestUser } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

async function product(api: Api, stock: number): Promise<{ id: string; sku: string }> {
  const created = await api.admin.post(`${V1}/products`, { ...productBody(), price: 10, stock, status: 'active' })
  return { id: created.body.id, sku: created.body.sku }
}

/** An order of `user`'s with `lines` (product id, quantity); its path and current ETag. */
async function order(user: TestUser, lines: [string, number][] = []): Promise<{ path: string; etag: () => Promise<string> }> {
  const path = `${V1}/orders/${(await user.api.post(`${V1}/orders`, {})).body.id}`
  for (const [productId, quantity] of lines) await user.api.post(`${path}/items`, { product_id: productId, quantity })
  return { path, etag: async () => (await user.api.get(path)).headers.get('etag')! }
}

const move = async (api: Api, o: { path: string; etag: () => Promise<string> }, status: string) =>
  api.patch(o.path, { status }, { 'if-match': await o.etag() })

const stockOf = async (api: Api, id: string) => (await api.admin.get(`${V1}/products/${id}`)).body.stock

t.test('a new order is pending; a create in another state is 422', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    t.equal((await alice.api.post(`${V1}/orders`, { status: 'pending' })).body.status, 'pending')
    const paid = await alice.api.post(`${V1}/orders`, { status: 'paid' })
    t.equal(paid.status, 422)
    t.same(paid.body.error.details, [{ field: 'status', reason: 'must be "pending" when created' }])
    t.equal((await api.admin.get(`${V1}/events?type=orders.created`)).body.length, 1, 'the refused create recorded nothing')
  }),
)

t.test('the lifecycle: paid by the owner (stock taken), shipped and delivered by admins', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const [mug, pot] = [await product(api, 5), await product(api, 2)]
    const o = await order(alice, [[mug.id, 2], [pot.id, 1], [mug.id, 1]])

    const paid = await move(alice.api, o, 'paid')
    t.equal(paid.status, 200)
    t.equal(paid.body.status, 'paid')
    t.equal(await stockOf(api, mug.id), 2, 'both items of the mug taken: 5 - 3')
    t.equal(await stockOf(api, pot.id), 1)
    const item = (await alice.api.get(`${o.path}/items`)).body[0]
    const frozen = await alice.api.patch(`${o.path}/items/${item.id}`, { quantity: 9 })
    t.equal(frozen.status, 409, 'items change only while pending')
    t.equal(frozen.body.error.code, 'STATE_CONFLICT')

    const byOwner = await move(alice.api, o, 'shipped')
    t.equal(byOwner.status, 403, 'only admins ship')
    t.same(byOwner.body.error.details, [{ field: 'status', reason: 'may move to "shipped" only by admins' }])
    t.equal((await move(api.admin, o, 'shipped')).status, 200)
    const back = await move(api.admin, o, 'paid')
    t.equal(back.status, 409)
    t.equal(back.body.error.code, 'INVALID_TRANSITION')
    t.same(back.body.error.details, [{ field: 'status', reason: 'can move from "shipped" only to "delivered"' }])
    t.equal((await move(alice.api, o, 'cancelled')).status, 409, 'a shipped order is not cancelled')
    t.equal((await move(api.admin, o, 'delivered')).status, 200)
    const final = await move(api.admin, o, 'cancelled')
    t.same(final.body.error.details, [{ field: 'status', reason: '"delivered" is final: it does not change' }])
    t.equal((await api.admin.put(o.path, { note: 'delivered with care' }, { 'if-match': await o.etag() })).body.status, 'delivered', 'a PUT without status keeps it')

    const moves = (await api.admin.get(`${V1}/events?type=orders.status_changed`)).body
    t.same(moves.map((e: { data: { from: string; to: string } }) => `${e.data.from}->${e.data.to}`), ['pending->paid', 'paid->shipped', 'shipped->delivered'])
    t.match(moves[0], { collection: 'orders', actor_id: alice.id, data: { status: 'paid', total: { amount: 40, currency: 'USD' } } }, 'data: the order as v2, the newest version, shows it')
    const stock = (await api.admin.get(`${V1}/events?type=products.updated`)).body
    t.same(stock.map((e: { data: { stock: number } }) => e.data.stock).sort(), [1, 2], 'each product whose stock moved has its event')
  }),
)

t.test('paying needs items and enough stock; a refused payment changes nothing', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const empty = await order(alice)
    const none = await move(alice.api, empty, 'paid')
    t.equal(none.status, 409)
    t.equal(none.body.error.code, 'STATE_CONFLICT')
    t.match(none.body.error.message, /without items/)

    const [plenty, scarce] = [await product(api, 10), await product(api, 1)]
    const o = await order(alice, [[plenty.id, 3], [scarce.id, 2]])
    const before = await api.admin.get(`${V1}/events`)
    const short = await move(alice.api, o, 'paid')
    t.equal(short.status, 409)
    t.equal(short.body.error.code, 'STATE_CONFLICT')
    t.match(short.body.error.message, scarce.sku)
    t.same(short.body.error.details, [{ field: 'product_id', reason: `${scarce.id} (${scarce.sku}) has 1 in stock; the order needs 2` }])
    t.equal(await stockOf(api, plenty.id), 10, 'the stock of the other product was not taken')
    t.equal((await alice.api.get(o.path)).body.status, 'pending')
    t.same((await api.admin.get(`${V1}/events`)).body, before.body, 'and no event was recorded')
  }),
)

t.test('cancelling: pending by its owner; paid by its owner or an admin, the stock given back', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const mug = await product(api, 4)
    const pending = await order(alice, [[mug.id, 1]])
    t.equal((await move(api.admin, pending, 'cancelled')).status, 403, 'a pending order is cancelled by its owner only')
    t.equal((await move(api.admin, pending, 'paid')).status, 403, 'and paid by its owner only')
    t.equal((await move(alice.api, pending, 'cancelled')).status, 200)
    t.equal(await stockOf(api, mug.id), 4, 'nothing was taken, nothing given back')

    const paid = await order(alice, [[mug.id, 3]])
    t.equal((await move(alice.api, paid, 'paid')).status, 200)
    t.equal(await stockOf(api, mug.id), 1)
    t.equal((await move(api.admin, paid, 'cancelled')).status, 200)
    t.equal(await stockOf(api, mug.id), 4, 'the paid quantities are back')
  }),
)

t.test('an admin who owns an order may pay it: the owner rule is about the order, not the role', (t) =>
  eachDatabase(t, async (t, api) => {
    const boss = await api.newUser({ roles: ['admin'] })
    const mug = await product(api, 1)
    const o = await order(boss, [[mug.id, 1]])
    t.equal((await move(boss.api, o, 'paid')).status, 200)
  }),
)

t.test('two orders compete for the last units of a product: exactly one is paid, stock never below zero', async (t) => {
  for (const kind of databaseKinds()) {
    await t.test(kind, async (t) => {
      const api = await startApi(t, kind)
      const mug = await product(api, 3)
      for (let round = 0; round < 5; round++) {
        await api.admin.patch(`${V1}/products/${mug.id}`, { stock: 3 })
        const buyers = [await api.newUser(), await api.newUser()]
        const orders = await Promise.all(buyers.map((buyer) => order(buyer, [[mug.id, 2]])))
        const etags = await Promise.all(orders.map((o) => o.etag()))
        const answers = await Promise.all(orders.map((o, i) => buyers[i]!.api.patch(o.path, { status: 'paid' }, { 'if-match': etags[i]! })))
        t.same(answers.map((a) => a.status).sort(), [200, 409], `round ${round}: one paid, one refused`)
        t.equal(await stockOf(api, mug.id), 1)
      }
      const moves = (await api.admin.get(`${V1}/events?type=orders.status_changed&size=100`)).body
      t.equal(moves.length, 5, 'the lost races recorded nothing: one move a round')
    })
  }
})

// An item's history (DESIGN "Data over time"): GET /{collection}/{id}/history, newest first, each
// change with its fields' from and to, for whoever may read the item and as they may read it;
// paged by cursor; kept longer than the feed for a collection with `history: { days }`.
import t from 'tap'
import { shopCollections } from '../../src/collections/index.js'
import { eventLog } from '../../src/db/events.js'
import { historyKept } from '../../src/resources/collection.js'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

const V2 = '/api/v2'
const MISSING = '01890000-0000-7000-8000-000000000000'

/** The event log without the service's rendering: pruning needs none. */
const asStored = (_collection: string, _item: unknown, data: Record<string, unknown>) => data

interface Entry {
  id: number
  type: string
  occurred_at: string
  actor_id: string | null
  changes?: Record<string, { from: unknown; to: unknown }> | null
}

/** Each entry as `type changes` (the changes as JSON; `-` for none), newest first. */
const lines = (entries: Entry[]) => entries.map((e) => `${e.type} ${e.changes === undefined ? '-' : JSON.stringify(e.changes)}`)

async function history(api: Api, path: string, query = ''): Promise<Entry[]> {
  const answer = await api.get(`${path}/history${query}`)
  if (answer.status !== 200) throw new Error(`GET ${path}/history${query}: ${answer.status} ${answer.text}`)
  return answer.body
}

t.test("a product's history: newest first, each change's fields from and to, as the caller's version shows them", (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/products`, productBody({ name: 'Mug', price: 10, cost: 4 }))
    const path = `${V1}/products/${created.body.id}`
    t.equal((await api.admin.patch(path, { price: 12, stock: 3, tags: ['kitchen'] })).status, 200)
    t.equal((await api.admin.patch(path, { name: 'Big mug' })).status, 200)
    t.equal((await api.admin.patch(path, { cost: 5 })).status, 200)
    t.equal((await api.admin.patch(path, { cost: 5 })).status, 200, 'a change that changes nothing records nothing')

    const answer = await api.admin.get(`${path}/history`)
    t.equal(answer.status, 200)
    t.match(answer.headers.get('content-type'), /^application\/json/)
    t.same(lines(answer.body), [
      'products.updated {"cost":{"from":4,"to":5}}',
      'products.updated {"name":{"from":"Mug","to":"Big mug"}}',
      'products.updated {"price":{"from":10,"to":12},"stock":{"from":0,"to":3},"tags":{"from":[],"to":["kitchen"]}}',
      'products.created -',
    ])
    const feed = (await api.admin.get(`${V1}/events?collection=products`)).body as { id: number; occurred_at: string; actor_id: string }[]
    t.same(answer.body.map((e: Entry) => [e.id, e.occurred_at, e.actor_id]), feed.reverse().map((e) => [e.id, e.occurred_at, e.actor_id]), "each entry is its event: the feed's id, time and actor")
    t.match(answer.body[0].actor_id, /^[0-9a-f-]{36}$/, 'the admin who made the change')

    // Anyone may read a product, and its history; the cost is an admin's only, in the changes too.
    const anonymous = await api.anonymous.get(`${path}/history`)
    t.equal(anonymous.status, 200)
    t.same(lines(anonymous.body), [
      'products.updated {}',
      'products.updated {"name":{"from":"Mug","to":"Big mug"}}',
      'products.updated {"price":{"from":10,"to":12},"stock":{"from":0,"to":3},"tags":{"from":[],"to":["kitchen"]}}',
      'products.created -',
    ], "a change of the cost alone shows no field (the item's updated_at, which anyone reads, moved too)")
    t.notMatch(anonymous.text, /cost/)
    t.equal(anonymous.headers.get('cache-control'), 'public, max-age=60', 'as cacheable as the product')
    const customer = await api.newUser()
    t.notMatch((await customer.api.get(`${path}/history`)).text, /cost/, 'nor to a signed-in customer')

    // v2 shows amounts as objects: so do its changes.
    const v2 = await history(api.admin, `${V2}/products/${created.body.id}`)
    t.same(v2[0]!.changes, { cost: { from: { amount: 4, currency: 'USD' }, to: { amount: 5, currency: 'USD' } } })
    t.same(v2[2]!.changes!.price, { from: { amount: 10, currency: 'USD' }, to: { amount: 12, currency: 'USD' } })
  }),
)

t.test("a state move: the change's `updated` with every field and `status_changed` with the state, from and to", (t) =>
  eachDatabase(t, async (t, api) => {
    const mug = (await api.admin.post(`${V1}/products`, productBody({ price: 10, stock: 5, status: 'active' }))).body
    const alice = await api.newUser()
    const order = await alice.api.post(`${V1}/orders`, { note: 'gift' })
    const path = `${V1}/orders/${order.body.id}`
    const item = await alice.api.post(`${path}/items`, { product_id: mug.id, quantity: 2 })
    t.equal(item.status, 201)
    // The item has a history of its own, for whoever may read it: its order's owner, an admin.
    const itemHistory = `${path}/items/${item.body.id}/history`
    t.same(lines((await alice.api.get(itemHistory)).body), ['order_items.created -'])
    const bob = await api.newUser()
    t.equal((await bob.api.get(itemHistory)).status, (await bob.api.get(`${path}/items/${item.body.id}`)).status, "another's order's item: as its read")
    const etag = (await alice.api.get(path)).headers.get('etag')!
    t.equal((await alice.api.patch(path, { status: 'paid', note: 'a gift' }, { 'if-match': etag })).status, 200)
    const entries = await history(alice.api, path)
    t.same(lines(entries), [
      'orders.status_changed {"status":{"from":"pending","to":"paid"}}',
      'orders.updated {"status":{"from":"pending","to":"paid"},"note":{"from":"gift","to":"a gift"}}',
      'orders.updated {"total":{"from":0,"to":20}}',
      'orders.created -',
    ], "an item's change moves its order's total: an update of the order")
    t.equal(entries[0]!.actor_id, alice.id)
    t.ok(entries[0]!.id > entries[1]!.id, 'the move after the update it comes with, as in the feed')
    // The product's stock went with the payment, in the same transaction: its own history says so.
    t.same(lines(await history(api.admin, `${V1}/products/${mug.id}`)).slice(0, 1), ['products.updated {"stock":{"from":5,"to":3}}'])
  }),
)

t.test('paging: size and a cursor, with Link; the last entry of a page still has its from', (t) =>
  eachDatabase(t, async (t, api) => {
    const path = `${V1}/products/${(await api.admin.post(`${V1}/products`, productBody({ stock: 0 }))).body.id}`
    for (let stock = 1; stock <= 4; stock++) await api.admin.patch(path, { stock })
    const all = await history(api.admin, path)
    t.equal(all.length, 5)
    const pages: Entry[][] = []
    let next: string | undefined = `${path}/history?size=2`
    while (next) {
      const page: { status: number; body: Entry[]; headers: Headers } = await api.admin.get(next)
      t.equal(page.status, 200)
      pages.push(page.body)
      const link: string = page.headers.get('link')!
      t.match(link, `<${path}/history?size=2&cursor=>; rel="first"`)
      next = /<([^>]+)>; rel="next"/.exec(link)?.[1]
    }
    t.same(pages.map((page) => page.length), [2, 2, 1])
    t.same(pages.flat(), all, 'the pages together are the whole history, each entry as it is on one page')
    t.same(pages[0]![1]!.changes, { stock: { from: 2, to: 3 } }, "a page's last change has its from: the event after the page was read")
    t.same(pages[1]![0]!.changes, { stock: { from: 1, to: 2 } })

    for (const [query, field] of <[string, string][]>[['size=0', 'size'], ['size=101', 'size'], ['size=two', 'size'], ['cursor=abc', 'cursor'], ['cursor=-1', 'cursor'], ['sort=id', 'sort'], ['size=1&size=2', 'size']]) {
      const bad = await api.admin.get(`${path}/history?${query}`)
      t.equal(bad.status, 400, query)
      t.equal(bad.body.error.code, 'INVALID_PARAMETER')
      t.same(bad.body.error.details.map((d: { field: string }) => d.field), [field], `${query} names ${field}`)
    }
    t.equal((await api.admin.get(`${V1}/products/${MISSING}/history?size=0`)).status, 400, 'a bad parameter is a 400 before the item is looked for')
  }),
)

t.test('conditional: an ETag of the page, 304 while it is the same, another once the item changes', (t) =>
  eachDatabase(t, async (t, api) => {
    const path = `${V1}/products/${(await api.admin.post(`${V1}/products`, productBody())).body.id}`
    const first = await api.admin.get(`${path}/history`)
    const etag = first.headers.get('etag')!
    t.match(etag, /^"[\w-]+"$/)
    const same = await api.admin.get(`${path}/history`, { 'if-none-match': etag })
    t.equal(same.status, 304)
    t.equal(same.text, '')
    t.not((await api.anonymous.get(`${path}/history`)).headers.get('etag'), null)
    await api.admin.patch(path, { stock: 9 })
    const changed = await api.admin.get(`${path}/history`, { 'if-none-match': etag })
    t.equal(changed.status, 200, 'a new entry: a new page')
    t.not(changed.headers.get('etag'), etag)
    t.equal(changed.body.length, 2)
    const head = await api.admin.request('HEAD', `${path}/history`)
    t.equal(head.status, 200, 'HEAD as GET, without the body')
    t.equal(head.headers.get('etag'), changed.headers.get('etag'))
    t.equal(head.text, '')
    const post = await api.admin.post(`${path}/history`, {})
    t.equal(post.status, 405, 'a history is only read')
    t.match(post.headers.get('allow'), /^GET, HEAD/)
  }),
)

t.test('access: as the read of the item, for every collection, nested ones too', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const bob = await api.newUser()
    const order = `${V1}/orders/${(await alice.api.post(`${V1}/orders`, {})).body.id}`
    t.equal((await alice.api.get(`${order}/history`)).status, 200, 'the owner reads their order\'s history')
    t.equal((await api.admin.get(`${order}/history`)).status, 200, 'an admin every order\'s')
    for (const [who, client] of [['bob', bob.api], ['anonymous', api.anonymous]] as const) {
      const [read, history] = [await client.get(order), await client.get(`${order}/history`)]
      t.equal(history.status, read.status, `${who}: what a read of the order answers (${read.status})`)
      t.equal(history.body.error.code, read.body.error.code)
    }
    t.equal((await bob.api.get(`${order}/history`)).status, 403, "another's order")
    t.equal((await api.anonymous.get(`${order}/history`)).status, 401)
    for (const id of [MISSING, 'not-an-id']) t.equal((await api.admin.get(`${V1}/orders/${id}/history`)).status, 404, `unknown id ${id}`)

    // Nested: the review's history under its own product only.
    const [a, b] = [(await api.admin.post(`${V1}/products`, productBody())).body.id, (await api.admin.post(`${V1}/products`, productBody())).body.id]
    const review = (await alice.api.post(`${V1}/products/${a}/reviews`, { rating: 3, title: 'Fine' })).body
    await alice.api.patch(`${V1}/products/${a}/reviews/${review.id}`, { rating: 4 })
    t.same(lines(await history(api.anonymous, `${V1}/products/${a}/reviews/${review.id}`)), ['reviews.updated {"rating":{"from":3,"to":4}}', 'reviews.created -'])
    t.equal((await api.admin.get(`${V1}/products/${b}/reviews/${review.id}/history`)).status, 404, "under another product: 404, as its read")
    // The product's history counts its reviews: a review is an update of the product's figures.
    t.same(lines(await history(api.anonymous, `${V1}/products/${a}`)).slice(0, 2), [
      'products.updated {"rating_average":{"from":3,"to":4}}',
      'products.updated {"review_count":{"from":0,"to":1},"rating_average":{"from":null,"to":3}}',
    ])

    // A deleted item's history is gone with it.
    t.equal((await api.admin.delete(`${V1}/products/${b}`)).status, 204)
    t.equal((await api.admin.get(`${V1}/products/${b}/history`)).status, 404)
    const webhook = await api.admin.post(`${V1}/webhooks`, { url: 'https://hooks.example.com/shop', events: ['*'] })
    t.equal((await api.admin.get(`${V1}/webhooks/${webhook.body.id}`)).status, 200)
    t.equal((await api.admin.get(`${V1}/webhooks/${webhook.body.id}/history`)).status, 404, 'a collection changed without events has no history route')
  }),
)

t.test("a user's email is in their history for them and admins only; a change before the log shows as null", (t) =>
  eachDatabase(t, async (t, api) => {
    const bob = await api.newUser()
    const alice = await api.newUser()
    const path = `${V1}/users/${bob.id}`
    t.equal((await bob.api.patch(path, { name: 'Robert' })).status, 200)
    t.equal((await bob.api.patch(path, { email: `robert.${bob.email}` })).status, 200)
    // The test's users are written without an event: their first change has no event before it.
    t.same(lines(await history(bob.api, path)), [`users.updated {"email":{"from":"${bob.email}","to":"robert.${bob.email}"}}`, 'users.updated null'])
    t.same(lines(await history(api.admin, path)), lines(await history(bob.api, path)), 'an admin sees what bob does')
    const seen = await alice.api.get(`${path}/history`)
    t.same(lines(seen.body), ['users.updated {}', 'users.updated null'], 'alice may read bob, not his email')
    t.notMatch(seen.text, /@/)
    // An event from before the log kept the item's row: nothing to show as the caller may see it.
    await api.db.query('UPDATE events SET item = NULL WHERE id = (SELECT max(id) FROM events WHERE item_id = $1)', [bob.id])
    t.same(lines(await history(bob.api, path)), ['users.updated null', 'users.updated null'])
  }),
)

t.test('history: { days } keeps a collection\'s events past the feed\'s retention; the feed keeps its own', (t) =>
  eachDatabase(t, async (t, api) => {
    const product = `${V1}/products/${(await api.admin.post(`${V1}/products`, productBody({ price: 10 }))).body.id}`
    await api.admin.patch(product, { price: 11 })
    const alice = await api.newUser()
    const order = `${V1}/orders/${(await alice.api.post(`${V1}/orders`, { note: 'a' })).body.id}`
    await alice.api.patch(order, { note: 'b' }, { 'if-match': (await alice.api.get(order)).headers.get('etag')! })
    const before = await history(api.admin, product)
    const oldest = before.at(-1)!.id
    // Both items' events are a month old: past the feed's 7 days, within the products' 90.
    await api.db.query("UPDATE events SET occurred_at = now() - interval '30 days'", [])
    const kept = historyKept(shopCollections('open'))
    t.same([...kept], [['products', 90]], 'products declare 90 days')
    t.equal(await eventLog(api.db, asStored).prune(7, kept), 4, 'the feed no longer has any of them')

    const whole = await history(api.admin, product)
    t.same(whole.map(({ occurred_at: _, ...entry }) => entry), before.map(({ occurred_at: _, ...entry }) => entry), "the product's history is whole")
    t.ok(whole.every((entry) => Date.parse(entry.occurred_at) < Date.now() - 29 * 86_400_000), 'a month old')
    t.same(await history(alice.api, order), [], "the order's is gone with the feed's retention")
    const expired = await api.admin.get(`${V1}/events?after=${oldest}`)
    t.equal(expired.status, 410, "the feed does not serve the product's kept events: after one of them is 410")
    t.equal(expired.body.error.code, 'EVENTS_EXPIRED')
    t.same((await api.admin.get(`${V1}/events`)).body, [], 'and does not start with them')

    // A change after the pruning: its previous event is kept for the product, not for the order.
    await api.admin.patch(product, { price: 12 })
    await alice.api.patch(order, { note: 'c' }, { 'if-match': (await alice.api.get(order)).headers.get('etag')! })
    t.same(lines(await history(api.admin, product)).slice(0, 2), ['products.updated {"price":{"from":11,"to":12}}', 'products.updated {"price":{"from":10,"to":11}}'])
    t.same(lines(await history(alice.api, order)), ['orders.updated null'], 'what changed cannot be told: null')
    t.same((await api.admin.get(`${V1}/events`)).body.map((e: { type: string }) => e.type), ['products.updated', 'orders.updated'], 'the feed has the new events only')

    // Past its 90 days, the product's history lets them go too.
    await api.db.query("UPDATE history_events SET occurred_at = now() - interval '91 days'", [])
    t.equal(await eventLog(api.db, asStored).prune(7, kept), 0)
    t.same(lines(await history(api.admin, product)), ['products.updated null'])
    // A collection that no longer keeps a longer history: its kept events go at the next pruning
    // (here no collection keeps any; else once they are as old as the fewest days one keeps).
    await api.db.query("INSERT INTO history_events (id, type, collection, item_id, occurred_at) VALUES (1, 'products.created', 'products', gen_random_uuid(), now() - interval '10 days')", [])
    await eventLog(api.db, asStored).prune(7)
    t.same(await api.db.query('SELECT id FROM history_events', []), [])
  }),
)

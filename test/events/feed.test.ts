// The outbox and the change feed (DESIGN "Events"): one event per committed change, in its
// transaction; none for a write that fails; GET /events for admins, resumable, filtered, paged.
import t from 'tap'
import { accounts } from '../../src/db/accounts.js'
import { eventLog, type StoredEvent } from '../../src/db/events.js'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

/** The event log without the service's rendering: pruning and the end need none. */
const asStored = (_collection: string, _item: unknown, data: Record<string, unknown>) => data

/** An event as the feed shows it: its position stays inside the service. */
type Event = Omit<StoredEvent, 'position'>

const feed = async (api: Api, query = ''): Promise<Event[]> => {
  const answer = await api.admin.get(`${V1}/events${query}`)
  if (answer.status !== 200) throw new Error(`GET /events${query}: ${answer.status} ${answer.text}`)
  return answer.body
}

t.test('every change of every kind records one event with the item as an admin sees it in the newest version', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/products`, productBody({ price: 12.5, cost: 4 }))
    const path = `${V1}/products/${created.body.id}`
    const patched = await api.admin.patch(path, { stock: 7 })
    await api.admin.put(path, { ...productBody({ sku: created.body.sku, price: 13 }) })
    const detail = (await api.admin.get(`/api/v2/products/${created.body.id}`)).body
    t.equal((await api.admin.delete(path)).status, 204)

    const events = await feed(api)
    // A product goes to the trash (src/resources/trash.ts); the events of its other moves: test/conventions/trash.test.ts.
    t.same(events.map((e) => e.type), ['products.created', 'products.updated', 'products.updated', 'products.trashed'])
    t.ok(events.every((e, i) => i === 0 || e.id > events[i - 1]!.id), 'ascending ids')
    const [first, second, , last] = events
    t.match(first, { collection: 'products', item_id: created.body.id, actor_id: String })
    t.same(first!.data.price, { amount: 12.5, currency: 'USD' }, 'as v2 shows it, though v1 made the change')
    t.same(first!.data.cost, { amount: 4, currency: 'USD' }, "with the fields only admins read")
    t.equal(second!.data.stock, 7)
    t.equal(second!.data.updated_at, patched.body.updated_at)
    const { updated_at: trashedAt, deleted_at: deletedAt, ...rest } = last!.data
    const { updated_at: updatedAt, ...lastRead } = detail
    t.same(rest, lastRead, 'a delete carries the last representation')
    t.ok(deletedAt && (trashedAt as string) > updatedAt, 'as it went to the trash, when')
    t.ok(Date.parse(first!.occurred_at) > 0)
  }),
)

t.test('an event keeps the row as written, never a write-only column, and is shown when read; older events as they were kept', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = (await api.admin.post(`${V1}/products`, productBody({ price: 12.5, cost: 4 }))).body
    const registered = (await api.admin.post(`${V1}/users`, { email: 'kept@example.com', name: 'Kept', password: 'a long enough password' })).body
    const [product] = await api.db.query<{ item: Record<string, unknown>; data: unknown }>("SELECT item, data FROM events WHERE type = 'products.created'", [])
    t.match(product!.item, { id: created.id, price: 12.5, cost: 4, rating_total: 0, review_count: 0 }, 'the row, by column name: what the item is computed from too')
    t.same(product!.data, {}, 'and nothing else')
    const [user] = await api.db.query<{ item: Record<string, unknown> }>("SELECT item FROM events WHERE type = 'users.created'", [])
    t.equal(user!.item.id, registered.id)
    t.notOk('password_hash' in user!.item, "a password's hash is never kept")
    // An event written before rows were kept: its data is its representation, served as it is.
    await api.db.query("INSERT INTO events (type, collection, item_id, data) VALUES ('products.updated', 'products', $1, $2)", [created.id, JSON.stringify({ id: created.id, name: 'As it was' })])
    const events = await feed(api)
    t.same(events.at(-1)!.data, { id: created.id, name: 'As it was' })
    t.same(events[0]!.data.price, { amount: 12.5, currency: 'USD' }, 'a kept row shows as the newest version does')
  }),
)

t.test('users made or changed outside the users routes are events too: the CLI, an identity provider and the roles it asserts', (t) =>
  eachDatabase(t, async (t, api) => {
    const store = accounts(api.db)
    const made = await store.create({ email: 'cli@shop.test', name: 'From the CLI', passwordHash: 'scrypt$not-a-hash', roles: [] })
    const external = await store.ensureExternal({ subject: 'idp|7', email: 'idp@shop.test', name: 'From the provider', roles: ['admin'] })
    t.same(await store.ensureExternal({ subject: 'idp|7', email: 'idp@shop.test', name: 'From the provider', roles: ['admin'] }), external, 'found again: no second event')
    await store.setRoles(external.id, [])
    const events = await feed(api, '?type=users.created,users.updated')
    t.same(events.map((e) => [e.type, e.item_id]), [['users.created', made.id], ['users.created', external.id], ['users.updated', external.id]])
    t.same(events[2]!.data.roles, [], 'as the user is now')
    t.equal(events[0]!.actor_id, null, 'made by the service itself')
    const kept = await api.db.query<{ item: Record<string, unknown> }>("SELECT item FROM events WHERE collection = 'users'", [])
    t.ok(kept.every(({ item }) => !('password_hash' in item) && !('external_subject' in item)), 'no secret is kept')
  }),
)

t.test('a write that fails records nothing; one that changes nothing records nothing', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = (await api.admin.post(`${V1}/products`, productBody({ sku: 'ONLY-ONE' }))).body
    const path = `${V1}/products/${created.id}`
    const failures = [
      await api.admin.post(`${V1}/products`, productBody({ sku: 'ONLY-ONE' })), // 409 unique
      await api.admin.post(`${V1}/products`, { name: '' }), // 422
      await api.admin.patch(path, { stock: 2 }, { 'if-match': '"stale"' }), // 412
      await api.anonymous.delete(path), // 401
      await api.admin.delete(`${V1}/products/01890000-0000-7000-8000-000000000000`), // 404
    ]
    t.same(failures.map((f) => f.status), [409, 422, 412, 401, 404])
    t.equal((await api.admin.patch(path, { name: created.name })).status, 200)
    t.same((await feed(api)).map((e) => e.type), ['products.created'])
  }),
)

t.test('nested items: their events, and the parent event when the parent keeps figures of them', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    const product = (await api.admin.post(`${V1}/products`, productBody({ price: 3, status: 'active' }))).body
    const review = await alice.api.post(`${V1}/products/${product.id}/reviews`, { rating: 4, title: 'Good' })
    await alice.api.patch(`${V1}/products/${product.id}/reviews/${review.body.id}`, { title: 'Very good' })
    const order = (await alice.api.post(`${V1}/orders`, {})).body
    await alice.api.post(`${V1}/orders/${order.id}/items`, { product_id: product.id, quantity: 2 })
    const types = (await feed(api, '?size=100')).map((e) => e.type)
    t.same(types, [
      'products.created',
      'reviews.created', 'products.updated', // the product's rating changed
      'reviews.updated', // the title alone: the product did not change
      'orders.created',
      'order_items.created', 'orders.updated', // the order's total changed
    ])
    const events = await feed(api, '?type=orders.updated')
    t.same(events[0]!.data.total, { amount: 6, currency: 'USD' })
    t.equal(events[0]!.actor_id, alice.id)
  }),
)

t.test('the feed: admins only, resumable with after, filtered by type and collection, paged by size', (t) =>
  eachDatabase(t, async (t, api) => {
    const user = await api.newUser()
    t.equal((await api.anonymous.get(`${V1}/events`)).status, 401)
    t.equal((await user.api.get(`${V1}/events`)).status, 403)
    for (let i = 0; i < 3; i++) await api.admin.post(`${V1}/products`, productBody())
    const order = (await user.api.post(`${V1}/orders`, {})).body
    await user.api.patch(`${V1}/orders/${order.id}`, { note: 'x' }, { 'if-match': (await user.api.get(`${V1}/orders/${order.id}`)).headers.get('etag')! })

    const all = await feed(api)
    t.equal(all.length, 5)
    const page = await api.admin.get(`${V1}/events?size=2&type=products.created`)
    t.equal(page.body.length, 2)
    t.match(page.headers.get('link'), `</api/v1/events?size=2&type=products.created&after=${page.body[1].id}>; rel="next"`)
    t.equal(page.headers.get('cache-control'), 'no-store')
    const rest = await feed(api, `?size=2&type=products.created&after=${page.body[1].id}`)
    t.same(rest.map((e) => e.id), [all[2]!.id], 'the next page resumes after the last one read')
    const end = await api.admin.get(`${V1}/events?after=${all[4]!.id}`)
    t.same(end.body, [], 'at the end: an empty page')
    t.match(end.headers.get('link'), `after=${all[4]!.id}>`, 'whose next link stays where it is')

    t.same((await feed(api, '?type=orders.*')).map((e) => e.type), ['orders.created', 'orders.updated'])
    t.same((await feed(api, '?type=orders.created,products.created')).length, 4)
    t.same((await feed(api, '?collection=orders&type=products.*')).length, 0, 'filters combine')
    t.equal((await feed(api, '?collection=orders')).length, 2)

    for (const query of ['?after=-1', '?after=x', '?size=0', '?size=101', '?type=orders', '?type=*', '?collection=Or-ders', '?sort=id']) {
      const bad = await api.admin.get(`${V1}/events${query}`)
      t.equal(bad.status, 400, query)
      t.equal(bad.body.error.code, 'INVALID_PARAMETER')
    }
    // Each filter parameter is at most MAX_FILTER_LENGTH long, as the document says; repeated for more.
    const long = Array.from({ length: 120 }, () => 'orders.*').join(',')
    const refused = await api.admin.get(`${V1}/events?type=${long}`)
    t.equal(refused.status, 400)
    t.same(refused.body.error.details, [{ field: 'type', reason: 'must be at most 1000 characters; repeat type= for more' }])
    t.equal((await api.admin.get(`${V1}/events?collection=${'x'.repeat(1001)}`)).status, 400)
    t.equal((await api.admin.get(`${V1}/events?type=${long.slice(0, 539)}&type=${long.slice(540)}`)).status, 200, 'repeated')
    t.equal((await api.admin.get(`${V1}/events?after=0&size=100`)).status, 200, 'int32 size and int64 after take what they took')
    const post = await api.admin.post(`${V1}/events`, {})
    t.equal(post.status, 405, 'read-only')
    t.match(post.headers.get('allow'), /GET/)
    t.same((await api.admin.get(`/api/v2/events?type=orders.*`)).body.map((e: Event) => e.id), [all[3]!.id, all[4]!.id], 'v2 serves the same feed')
    const unknown = await api.admin.get(`${V1}/events?after=${all[4]!.id + 1000}`)
    t.equal(unknown.status, 400, 'an id that names no event')
    t.same(unknown.body.error.details, [{ field: 'after', reason: 'names no event: use the id of an event you read' }])
  }),
)

t.test('retention: old events are pruned; resuming after a pruned one is 410 EVENTS_EXPIRED', (t) =>
  eachDatabase(t, async (t, api) => {
    for (let i = 0; i < 3; i++) await api.admin.post(`${V1}/products`, productBody())
    const [oldest, middle, newest] = await feed(api)
    await api.db.query("UPDATE events SET occurred_at = now() - interval '8 days' WHERE id <= $1", [middle!.id])
    t.equal(await eventLog(api.db, asStored).prune(7), 2)
    const expired = await api.admin.get(`${V1}/events?after=${oldest!.id}`)
    t.equal(expired.status, 410)
    t.equal(expired.body.error.code, 'EVENTS_EXPIRED')
    t.same((await feed(api)).map((e) => e.id), [newest!.id], 'the feed starts at the oldest kept event')
    t.same(await feed(api, `?after=${newest!.id}`), [])
  }),
)

t.test('the feed orders by number: ids and transactions crossing a power of ten (9, 10; 99, 100) stay in order', (t) =>
  eachDatabase(t, async (t, api) => {
    // One transaction writes 150 events: ids 1 to 150, where text order would put 10 before 9.
    await api.db.query("INSERT INTO events (type, collection, item_id, data) SELECT 'products.updated', 'products', gen_random_uuid(), '{}' FROM generate_series(1, 150)", [])
    const ids: number[] = []
    let after = ''
    for (let page = 0; page < 10; page++) {
      const events = await feed(api, `?size=40${after}`)
      if (events.length === 0) break
      ids.push(...events.map((e) => e.id))
      after = `&after=${events.at(-1)!.id}`
    }
    const first = ids[0]!
    t.same(ids, Array.from({ length: 150 }, (_, i) => first + i), 'every event once, ascending, across pages')
    t.equal((await eventLog(api.db, asStored).end()).position.id, first + 149, 'the end is the last event by number')
  }),
)

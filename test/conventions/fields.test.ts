// `fields=` on items, lists and the answers of writes, and `Prefer: return=minimal` on writes
// (DESIGN "Reading: fields, include, filter expressions, search").
import t from 'tap'
import { eachDatabase, readsSeen, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

async function product(api: Api, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
  const created = await api.admin.post(`${V1}/products`, productBody({ description: 'A mug.', cost: 4, ...body }))
  if (created.status !== 201) throw new Error(created.text)
  return created.body
}


t.test('an item with fields=: those fields and id, in the schema order; the SQL reads only their columns', (t) =>
  eachDatabase(t, async (t, api) => {
    const mug = await product(api)
    const seen = readsSeen(api)
    const read = await api.admin.get(`${V1}/products/${mug.id}?fields=price,name`)
    t.equal(read.status, 200)
    t.strictSame(Object.keys(read.body), ['id', 'name', 'price'], 'id always; the order is the item schema’s')
    t.strictSame(read.body, { id: mug.id, name: mug.name, price: mug.price })
    t.match(read.headers.get('content-type'), /^application\/json/)
    t.ok(read.headers.get('last-modified'))
    const statement = seen.find((text) => text.includes('FROM "products"'))!
    t.match(statement, /^SELECT "id", "updated_at", "name", "price", "deleted_at" FROM "products"/, 'only the columns the fields need, those of the validators, and the trash\'s')
    // A computed field reads what it is computed from.
    const rated = await api.admin.get(`${V1}/products/${mug.id}?fields=rating_average`)
    t.strictSame(rated.body, { id: mug.id, rating_average: null })
    t.match(seen.at(-1), /"review_count", "rating_total"/)
    t.strictSame((await api.admin.get(`${V1}/products/${mug.id}?fields=id`)).body, { id: mug.id })
  }),
)

t.test('the ETag depends on the fields: 304 for the same set, 200 for another; If-Match works with any set of the version', (t) =>
  eachDatabase(t, async (t, api) => {
    const mug = await product(api)
    const full = await api.admin.get(`${V1}/products/${mug.id}`)
    const some = await api.admin.get(`${V1}/products/${mug.id}?fields=name`)
    const other = await api.admin.get(`${V1}/products/${mug.id}?fields=name,price`)
    const tags = [full, some, other].map((read) => read.headers.get('etag'))
    t.equal(new Set(tags).size, 3, 'three representations, three tags')
    t.equal((await api.admin.get(`${V1}/products/${mug.id}?fields=name`, { 'if-none-match': tags[1]! })).status, 304)
    t.equal((await api.admin.get(`${V1}/products/${mug.id}?fields=name,price`, { 'if-none-match': tags[1]! })).status, 200)
    t.equal((await api.admin.get(`${V1}/products/${mug.id}`, { 'if-none-match': tags[1]! })).status, 200)
    // A client that read the name may change the price of the version it read, and only of that one.
    const changed = await api.admin.patch(`${V1}/products/${mug.id}`, { price: 20 }, { 'if-match': tags[1]! })
    t.equal(changed.status, 200)
    const stale = await api.admin.patch(`${V1}/products/${mug.id}`, { price: 30 }, { 'if-match': tags[2]! })
    t.equal(stale.status, 412)
    // If-None-Match on a write asks the same of the version: one the client has is a 412.
    const current = (await api.admin.get(`${V1}/products/${mug.id}?fields=name`)).headers.get('etag')!
    t.equal((await api.admin.patch(`${V1}/products/${mug.id}`, { price: 31 }, { 'if-none-match': current })).status, 412)
    t.equal((await api.admin.get(`${V1}/products/${mug.id}`)).body.price, 20)
  }),
)

t.test('a list with fields=: detail fields too, each item with exactly those; cursors still work', (t) =>
  eachDatabase(t, async (t, api) => {
    for (let i = 0; i < 3; i++) await product(api, { description: `Item ${i}` })
    const seen = readsSeen(api)
    const page = await api.admin.get(`${V1}/products?fields=description&sort=name&size=2&cursor=`)
    t.equal(page.status, 200)
    t.equal(page.body.length, 2)
    for (const item of page.body) t.strictSame(Object.keys(item), ['id', 'description'], 'a detail field the summary lacks')
    t.notMatch(seen.find((text) => text.includes('FROM "products"')), /"stock"/, 'unasked columns are not read')
    const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link')!)![1]!
    t.match(next, /fields=description/, 'the links keep the fields')
    const after = await api.admin.get(next)
    t.equal(after.status, 200)
    t.strictSame(Object.keys(after.body[0]), ['id', 'description'])
    t.not(after.body[0].id, page.body[0].id)
    const plain = await api.admin.get(`${V1}/products?sort=name&size=2`)
    t.not(plain.headers.get('etag'), page.headers.get('etag'))
  }),
)

t.test('a field the caller may not read is left out, as from the default representation; the caller’s own are there', (t) =>
  eachDatabase(t, async (t, api) => {
    const mug = await product(api, { cost: 4 })
    const customer = await api.newUser()
    const read = await customer.api.get(`${V1}/products/${mug.id}?fields=name,cost`)
    t.equal(read.status, 200)
    t.strictSame(read.body, { id: mug.id, name: mug.name }, 'cost is for admins')
    t.strictSame((await api.admin.get(`${V1}/products/${mug.id}?fields=name,cost`)).body, { id: mug.id, name: mug.name, cost: 4 })
    const list = await customer.api.get(`${V1}/products?fields=cost`)
    t.ok(list.body.every((item: object) => Object.keys(item).join() === 'id'))
    const me = await customer.api.get(`${V1}/users/${customer.id}?fields=email`)
    t.strictSame(me.body, { id: customer.id, email: customer.email }, 'one’s own email')
    const other = await customer.api.get(`${V1}/users/${(await api.newUser()).id}?fields=email,name`)
    t.strictSame(Object.keys(other.body), ['id', 'name'], 'another’s is left out')
  }),
)

t.test('a fields= the collection cannot answer is a 400 naming it, before anything is read or written', (t) =>
  eachDatabase(t, async (t, api) => {
    const mug = await product(api)
    const cases: [string, RegExp][] = [
      ['fields=nmae', /has no field "nmae" \(did you mean name\?\); fields: id, name, sku/],
      ['fields=name,colour,size', /has no field "colour", "size"/],
      ['fields=', /must be a comma-separated list of field names/],
      ['fields=name,', /must be a comma-separated list/],
      ['fields=password', /has no field "password"/],
      ['fields=name&fields=price', /must be given at most once/],
      [`fields=${'name,'.repeat(250)}name`, /at most 1000 characters/],
    ]
    for (const [query, reason] of cases) {
      for (const path of [`${V1}/products/${mug.id}`, `${V1}/products`]) {
        const refused = await api.admin.get(`${path}?${query}`)
        t.equal(refused.status, 400, `${path}?${query.slice(0, 40)}`)
        t.equal(refused.body.error.code, 'INVALID_PARAMETER')
        t.equal(refused.body.error.details[0].field, 'fields')
        t.match(refused.body.error.details[0].reason, reason)
      }
    }
    const before = (await api.admin.get(`${V1}/products`)).headers.get('x-total-count')
    t.equal((await api.admin.post(`${V1}/products?fields=nope`, productBody())).status, 400)
    t.equal((await api.admin.patch(`${V1}/products/${mug.id}?fields=nope`, { price: 99 })).status, 400)
    t.equal((await api.admin.get(`${V1}/products`)).headers.get('x-total-count'), before, 'nothing created')
    t.equal((await api.admin.get(`${V1}/products/${mug.id}`)).body.price, mug.price, 'nothing changed')
    // The 401 and 403 of the route come first.
    t.equal((await api.anonymous.post(`${V1}/products?fields=nope`, productBody())).status, 401)
  }),
)

t.test('writes answer with the fields asked for, and their ETag is that representation’s', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/products?fields=sku`, productBody({ sku: 'FIELDS-1' }))
    t.equal(created.status, 201)
    t.strictSame(created.body, { id: created.body.id, sku: 'FIELDS-1' })
    t.ok(created.headers.get('location'))
    const path = `${V1}/products/${created.body.id}`
    t.equal(created.headers.get('etag'), (await api.admin.get(`${path}?fields=sku`)).headers.get('etag'))
    const patched = await api.admin.patch(`${path}?fields=price,stock`, { price: 3.5 })
    t.strictSame(patched.body, { id: created.body.id, price: 3.5, stock: 0 })
    const replaced = await api.admin.put(`${path}?fields=name`, productBody({ sku: 'FIELDS-1', name: 'Replaced' }))
    t.strictSame(replaced.body, { id: created.body.id, name: 'Replaced' })
    // A write in a transaction (a hook: an order item's price) answers the same way.
    const order = await api.admin.post(`${V1}/orders`, {})
    const mug = await product(api, { status: 'active', price: 7 })
    const item = await api.admin.post(`${V1}/orders/${order.body.id}/items?fields=unit_price`, { product_id: mug.id, quantity: 1 })
    t.equal(item.status, 201)
    t.strictSame(item.body, { id: item.body.id, unit_price: 7 })
  }),
)

t.test('Prefer: return=minimal: 201 with Location or 204, no body, the validators still sent', (t) =>
  eachDatabase(t, async (t, api) => {
    const minimal = { prefer: 'return=minimal' }
    const created = await api.admin.post(`${V1}/products`, productBody(), minimal)
    t.equal(created.status, 201, created.text)
    t.equal(created.text, '')
    t.equal(created.headers.get('preference-applied'), 'return=minimal')
    t.match(created.headers.get('vary'), /Prefer/)
    const location = created.headers.get('location')!
    const read = await api.admin.get(location)
    t.equal(created.headers.get('etag'), read.headers.get('etag'), 'the ETag of the item as it is')
    t.equal(created.headers.get('last-modified'), read.headers.get('last-modified'))
    const patched = await api.admin.patch(location, { price: 42 }, { ...minimal, 'if-match': read.headers.get('etag')! })
    t.equal(patched.status, 204)
    t.equal(patched.text, '')
    t.equal(patched.headers.get('preference-applied'), 'return=minimal')
    t.equal(patched.headers.get('etag'), (await api.admin.get(location)).headers.get('etag'))
    const replaced = await api.admin.put(location, productBody({ sku: read.body.sku, name: 'Put' }), minimal)
    t.equal(replaced.status, 204)
    t.equal((await api.admin.get(location)).body.name, 'Put', 'the change was made')
    // fields= and minimal: no body wins; the ETag is the whole item's.
    const both = await api.admin.patch(`${location}?fields=name`, { price: 43 }, minimal)
    t.equal(both.status, 204)
    t.equal(both.headers.get('etag'), (await api.admin.get(location)).headers.get('etag'))
    const full = await api.admin.patch(location, { price: 44 }, { prefer: 'return=representation' })
    t.equal(full.status, 200)
    t.equal(full.body.price, 44)
    t.equal(full.headers.get('preference-applied'), 'return=representation')
    const plain = await api.admin.patch(location, { price: 45 })
    t.equal(plain.headers.get('preference-applied'), null, 'no preference, none applied')
  }),
)

t.test('Prefer: return=minimal with an Idempotency-Key: the retry gets the same empty 201', (t) =>
  eachDatabase(t, async (t, api) => {
    const headers = { prefer: 'return=minimal', 'idempotency-key': 'minimal-1' }
    const body = productBody()
    const first = await api.admin.post(`${V1}/products`, body, headers)
    const again = await api.admin.post(`${V1}/products`, body, headers)
    t.equal(first.status, 201)
    t.equal(again.status, 201)
    t.equal(again.text, '')
    t.equal(again.headers.get('idempotent-replayed'), 'true')
    t.equal(again.headers.get('location'), first.headers.get('location'))
    t.equal(again.headers.get('preference-applied'), 'return=minimal', 'the replay says why it has no body')
    // Asking for the item with the same key is another request: the key cannot answer it.
    const other = await api.admin.post(`${V1}/products`, body, { 'idempotency-key': 'minimal-1' })
    t.equal(other.status, 422)
    t.equal(other.body.error.code, 'IDEMPOTENCY_KEY_REUSED')
  }),
)

t.test('a create that shows a secret once answers with it whatever the preference', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/webhooks`, { url: 'https://example.com/hook', events: ['*'] }, { prefer: 'return=minimal' })
    t.equal(created.status, 201)
    t.match(created.body.secret, /^whsec_/)
    t.equal(created.headers.get('preference-applied'), 'return=representation')
  }),
)

// The spec's method semantics on one collection: POST, GET, PUT, PATCH, DELETE (DESIGN "Endpoints").
import t from 'tap'
import { eachDatabase, V1 } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const RFC3339_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

t.test('POST creates: 201, Location, the created detail; GET Location returns the same (EP-03, RES-03, STATE-09)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const body = productBody({ name: 'Mug', sku: 'MUG-001', price: 12.5, tags: ['kitchen', 'ceramic'], description: 'A mug.' })
    const created = await admin.post(`${V1}/products`, body)
    t.equal(created.status, 201)
    t.match(created.body.id, UUID_V7)
    t.equal(created.headers.get('location'), `${V1}/products/${created.body.id}`)
    t.match(created.headers.get('content-type'), /^application\/json/)
    t.match(created.body, { ...body, cost: null, stock: 0, status: 'draft', review_count: 0, rating_average: null })
    t.match(created.body.created_at, RFC3339_MS)
    t.equal(created.body.created_at, created.body.updated_at)
    const read = await admin.get(created.headers.get('location')!)
    t.equal(read.status, 200)
    t.same(read.body, created.body)
  }),
)

t.test('types survive the round trip on every driver: decimals, timestamps with milliseconds, arrays', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    for (const price of [0, 0.1, 0.29, 19.99, 1234567.89, 9999999999.99]) {
      const created = await admin.post(`${V1}/products`, productBody({ price, cost: price }))
      t.equal(created.status, 201, `price ${price}`)
      const read = await admin.get(`${V1}/products/${created.body.id}`)
      t.equal(read.body.price, price, `price ${price} reads back exactly`)
      t.equal(read.body.cost, price)
      t.equal(typeof read.body.price, 'number')
    }
    const tags = ['ünïcödé', 'with space', 'comma,inside', '"quoted"', '{braces}', 'NULL']
    const created = await admin.post(`${V1}/products`, productBody({ tags }))
    const read = await admin.get(`${V1}/products/${created.body.id}`)
    t.same(read.body.tags, tags, 'array elements come back as sent, in order')
    t.equal(new Date(read.body.created_at).toISOString(), read.body.created_at, 'timestamps keep milliseconds')
  }),
)

t.test('server fields are server-made: id, created_at, updated_at in a POST are read-only (EP-04, SEC-10)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const res = await admin.post(`${V1}/products`, productBody({ id: '01890000-0000-7000-8000-000000000000', created_at: '2020-01-01T00:00:00.000Z', review_count: 9 }))
    t.equal(res.status, 422)
    t.equal(res.body.error.code, 'VALIDATION_ERROR')
    t.same(
      res.body.error.details.map((d: { field: string }) => d.field).sort(),
      ['created_at', 'id', 'review_count'],
    )
    t.ok(res.body.error.details.every((d: { reason: string }) => d.reason === 'is read-only'))
    t.equal((await admin.get(`${V1}/products`)).body.length, 0, 'nothing was stored')
  }),
)

t.test('absent and null optional fields mean the same on POST: the default or null (RES-12)', (t) =>
  eachDatabase(t, async (t, api) => {
    const res = await api.admin.post(`${V1}/products`, productBody({ stock: null, status: null, tags: null, description: null, cost: null }))
    t.equal(res.status, 201)
    t.match(res.body, { stock: 0, status: 'draft', tags: [], description: null, cost: null })
  }),
)

t.test('GET of an unknown or malformed id is 404 with the same body (EP-02, SEC-16)', (t) =>
  eachDatabase(t, async (t, api) => {
    const bodies: any[] = []
    for (const id of ['01890000-0000-7000-8000-000000000000', 'not-a-uuid', '1', '..%2F..%2Fetc', '%00', "1'%20OR%20'1'='1"]) {
      const res = await api.admin.get(`${V1}/products/${id}`)
      t.equal(res.status, 404, id)
      t.equal(res.headers.get('cache-control'), 'no-store')
      bodies.push(res.body)
    }
    t.ok(bodies.every((b) => JSON.stringify(b) === JSON.stringify(bodies[0])), 'unknown and malformed look alike')
    t.equal(bodies[0].error.code, 'NOT_FOUND')
  }),
)

t.test('PUT replaces: omitted optional fields become their default or null; 200 with the detail (EP-05)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody({ stock: 5, status: 'active', tags: ['a'], description: 'x', cost: 3 }))
    const id = created.body.id
    const res = await admin.put(`${V1}/products/${id}`, { name: 'Renamed', sku: created.body.sku, price: 11 })
    t.equal(res.status, 200)
    t.match(res.body, { id, name: 'Renamed', price: 11, stock: 0, status: 'draft', tags: [], description: null, cost: null })
    t.equal(res.body.created_at, created.body.created_at, 'created_at never changes (STATE-10)')
    t.ok(res.body.updated_at > created.body.updated_at, 'updated_at moves forward')
    t.same((await admin.get(`${V1}/products/${id}`)).body, res.body)
  }),
)

t.test('PUT takes back a GET body: server-maintained fields may be stale, identifying ones must not change (Z-9, STATE-06)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    const url = `${V1}/products/${created.body.id}`
    const edited = { ...created.body, name: 'Edited' }
    await admin.post(`${url}/reviews`, { rating: 4 })
    const ok = await admin.put(url, edited)
    t.equal(ok.status, 200, 'GET, edit, PUT works though review_count changed meanwhile')
    t.match(ok.body, { name: 'Edited', review_count: 1, rating_average: 4 })
    const again = await admin.put(url, edited)
    t.equal(again.status, 200, 'the same PUT again, with the old updated_at, still works')
    t.same(again.body, ok.body)
    const bad = await admin.put(url, { ...ok.body, id: '01890000-0000-7000-8000-000000000000', created_at: '2020-01-01T00:00:00.000Z' })
    t.equal(bad.status, 422)
    t.same(bad.body.error.details, [
      { field: 'id', reason: 'is read-only and differs from the stored value' },
      { field: 'created_at', reason: 'is read-only and differs from the stored value' },
    ])
    const mistyped = await admin.put(url, { ...ok.body, review_count: [[[[1]]]] })
    t.equal(mistyped.status, 422, 'read-only fields are typed as in the item')
    t.equal((await admin.get(url)).body.name, 'Edited', 'unchanged')
  }),
)

t.test('concurrent writes to one item all succeed without If-Match: the last one wins, none is lost half-way', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    const url = `${V1}/products/${created.body.id}`
    const patches = await Promise.all(Array.from({ length: 30 }, (_, i) => admin.patch(url, { stock: i + 1 })))
    t.same([...new Set(patches.map((r) => r.status))], [200], 'thirty concurrent PATCHes: all 200')
    const puts = await Promise.all(Array.from({ length: 10 }, (_, i) => admin.put(url, { ...created.body, name: `Name ${i}` })))
    t.same([...new Set(puts.map((r) => r.status))], [200], 'ten concurrent PUTs: all 200')
    const final = (await admin.get(url)).body
    t.ok(puts.some((r) => r.body.name === final.name && r.body.updated_at === final.updated_at), "the stored item is one writer's whole result")
  }),
)

t.test('PUT: unknown id 404 (no upsert), missing required field 422 and nothing changes (EP-06, EP-07)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const unknown = await admin.put(`${V1}/products/01890000-0000-7000-8000-000000000000`, productBody())
    t.equal(unknown.status, 404)
    t.equal((await admin.get(`${V1}/products`)).body.length, 0, 'nothing created')
    const created = await admin.post(`${V1}/products`, productBody())
    const res = await admin.put(`${V1}/products/${created.body.id}`, { name: 'Only a name' })
    t.equal(res.status, 422)
    t.same(res.body.error.details.map((d: { field: string }) => d.field).sort(), ['price', 'sku'])
    t.same((await admin.get(`${V1}/products/${created.body.id}`)).body, created.body)
  }),
)

t.test('the same PUT twice gives the same representation and stores nothing new (STATE-06)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    const body = { name: 'Same', sku: created.body.sku, price: 3 }
    const first = await admin.put(`${V1}/products/${created.body.id}`, body)
    const second = await admin.put(`${V1}/products/${created.body.id}`, body)
    t.equal(second.status, 200)
    t.same(second.body, first.body, 'updated_at did not move for a write that changed nothing')
  }),
)

t.test('PATCH is a JSON merge patch: named members change, null clears, arrays are replaced (EP-08, RFC 7396)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody({ description: 'old', tags: ['a', 'b'], stock: 4, status: 'active' }))
    const url = `${V1}/products/${created.body.id}`
    const res = await admin.patch(url, { description: null, tags: ['c'], stock: null }, { 'content-type': 'application/merge-patch+json' })
    t.equal(res.status, 200)
    t.match(res.body, { description: null, tags: ['c'], stock: 0, status: 'active', name: created.body.name })
    const json = await admin.patch(url, { price: 99.95 })
    t.equal(json.status, 200, 'application/json is a merge patch too')
    t.equal(json.body.price, 99.95)
    t.same((await admin.get(url)).body, json.body)
  }),
)

t.test('PATCH that would leave the item invalid is 422 and applies nothing (EP-09)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    const url = `${V1}/products/${created.body.id}`
    const res = await admin.patch(url, { name: null, price: -1, stock: 2 })
    t.equal(res.status, 422)
    t.same(res.body.error.details.map((d: { field: string }) => d.field).sort(), ['name', 'price'])
    t.same((await admin.get(url)).body, created.body, 'stock was not applied either')
    const array = await admin.patch(url, [{ op: 'replace', path: '/name', value: 'x' }])
    t.equal(array.status, 400, 'a patch that is not an object is unreadable')
    t.equal(array.body.error.code, 'BAD_REQUEST')
  }),
)

t.test('DELETE: 204 with no body, then GET 404, then DELETE 404 (EP-11, STATE-07)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    const url = `${V1}/products/${created.body.id}`
    const res = await admin.delete(url)
    t.equal(res.status, 204)
    t.equal(res.text, '')
    t.equal(res.headers.get('content-length'), null)
    t.equal(res.headers.get('content-type'), null)
    t.equal((await admin.get(url)).status, 404)
    const again = await admin.delete(url)
    t.equal(again.status, 404)
    t.equal(again.body.error.code, 'NOT_FOUND')
  }),
)

t.test('a taken unique value is 409 CONFLICT naming the field; nothing is written (ERR-06)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const first = await admin.post(`${V1}/products`, productBody({ sku: 'DUP-1' }))
    const dup = await admin.post(`${V1}/products`, productBody({ sku: 'DUP-1' }))
    t.equal(dup.status, 409)
    t.same(dup.body.error.details, [{ field: 'sku', reason: 'is already taken' }])
    t.equal(dup.body.error.code, 'CONFLICT')
    const other = await admin.post(`${V1}/products`, productBody({ sku: 'DUP-2' }))
    const patched = await admin.patch(`${V1}/products/${other.body.id}`, { sku: 'DUP-1' })
    t.equal(patched.status, 409, 'on update too')
    t.equal((await admin.get(`${V1}/products/${other.body.id}`)).body.sku, 'DUP-2')
    t.equal((await admin.get(`${V1}/products`)).headers.get('x-total-count'), '2')
    t.equal(first.status, 201)
  }),
)

// Writes in one statement (issue 24): a create, change or delete that needs no hook, no move and
// no parent is the change and its event in one statement, with no transaction around it. When
// that statement writes nothing, the transaction runs and answers why, in the order of checks.
// What a request did is read from its spans: its statements, and its transaction if it had one.
import t from 'tap'
import { V1, type Api, type Response } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { tracedApi, type Spans } from '../helpers/spans.js'

/** How a request wrote: `statement` for a change with its event in one statement, `transaction` for one. */
type Write = 'statement' | 'transaction'

let requests = 0

/** Sends a request through `api` and says how it wrote: its spans, less the lookups of the caller. */
async function traced(api: Api, spans: Spans, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response<any> & { writes: Write[] }> {
  const id = `one-statement-${(requests += 1)}`
  const answer = await api.request(method, path, { body, headers: { ...headers, 'x-request-id': id } })
  const server = await spans.find((span) => span.attributes['resourceful.request_id'] === id)
  const writes = spans
    .childrenOf(server)
    .flatMap((span): Write[] => (span.name === 'transaction' ? ['transaction'] : /INSERT INTO events/.test(String(span.attributes['db.query.text'])) ? ['statement'] : []))
  return { ...answer, writes }
}

const feed = async (api: Api) => (await api.admin.get(`${V1}/events`)).body as { type: string; item_id: string; data: Record<string, unknown> }[]

for (const kind of databaseKinds()) {
  t.test(`${kind}: a product's create, change, replace and delete are each one statement with their event`, async (t) => {
    const { api, spans } = await tracedApi(t, kind)
    const admin = api.admin
    const created = await traced(admin, spans, 'POST', `${V1}/products`, productBody({ price: 12.5, stock: 3 }))
    t.equal(created.status, 201)
    t.same(created.writes, ['statement'], 'POST: one statement')
    t.equal(created.headers.get('location'), `${V1}/products/${created.body.id}`)
    const path = `${V1}/products/${created.body.id}`
    const patched = await traced(admin, spans, 'PATCH', path, { stock: 4 }, { 'if-match': created.headers.get('etag')! })
    t.equal(patched.status, 200)
    t.same(patched.writes, ['statement'], 'PATCH with If-Match: one statement')
    t.equal(patched.body.stock, 4)
    t.ok(Date.parse(patched.body.updated_at) > Date.parse(created.body.updated_at), 'updated_at moved')
    t.not(patched.headers.get('etag'), created.headers.get('etag'))
    t.equal(patched.headers.get('content-location'), path)
    const content = Object.fromEntries(Object.entries(patched.body).filter(([name]) => !['id', 'created_at', 'updated_at', 'review_count', 'rating_average'].includes(name)))
    const replaced = await traced(admin, spans, 'PUT', path, { ...content, name: 'Replaced' })
    t.equal(replaced.status, 200)
    t.same(replaced.writes, ['statement'], 'PUT without the identity fields: one statement')
    t.equal(replaced.body.name, 'Replaced')
    t.equal(replaced.body.stock, 4)
    const deleted = await traced(admin, spans, 'DELETE', path)
    t.equal(deleted.status, 204)
    t.same(deleted.writes, ['statement'], 'DELETE (to the trash): one statement')
    const purged = await traced(admin, spans, 'DELETE', `${path}?trashed=only`)
    t.equal(purged.status, 204)
    t.same(purged.writes, ['statement'], 'DELETE for good: one statement')
    const events = await feed(api)
    t.same(events.map((e) => e.type), ['products.created', 'products.updated', 'products.updated', 'products.trashed', 'products.deleted'])
    t.ok(events.every((e) => e.item_id === created.body.id))
    t.same(events[1]!.data.stock, 4, 'the event is the row the statement wrote')
    t.same(events[0]!.data.price, { amount: 12.5, currency: 'USD' }, 'shown as the newest version does')
    t.same(events[3]!.data.name, 'Replaced', 'a delete carries the last row')
  })

  t.test(`${kind}: a statement that writes nothing hands the request to the transaction, which answers why`, async (t) => {
    const { api, spans } = await tracedApi(t, kind)
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody({ stock: 3 }))
    const path = `${V1}/products/${created.body.id}`
    const unchanged = await traced(admin, spans, 'PATCH', path, { stock: 3 })
    t.equal(unchanged.status, 200, 'nothing to change: the item as it is')
    t.same(unchanged.writes, ['statement', 'transaction'])
    t.equal(unchanged.body.updated_at, created.body.updated_at, 'not touched')
    const stale = await traced(admin, spans, 'PATCH', path, { stock: 5 }, { 'if-match': '"stale"' })
    t.equal(stale.status, 412, 'a tag that is no version of this item')
    t.same(stale.writes, ['transaction'], 'a tag that cannot match: straight to the transaction')
    const old = await traced(admin, spans, 'PATCH', path, { stock: 5 }, { 'if-match': `"v1.${(Date.parse(created.body.updated_at) - 1).toString(36)}"` })
    t.equal(old.status, 412, 'an older version')
    t.same(old.writes, ['statement', 'transaction'])
    const gone = await traced(admin, spans, 'DELETE', `${V1}/products/01890000-0000-7000-8000-000000000000`)
    t.equal(gone.status, 404)
    t.same(gone.writes, ['statement', 'transaction'])
    const duplicate = await traced(admin, spans, 'POST', `${V1}/products`, productBody({ sku: created.body.sku }))
    t.equal(duplicate.status, 409, 'a unique violation in the statement is the 409 the transaction would give')
    t.same(duplicate.writes, ['statement'])
    const echoed = await traced(admin, spans, 'PUT', path, { ...productBody({ sku: created.body.sku }), id: created.body.id })
    t.equal(echoed.status, 200)
    t.same(echoed.writes, ['transaction'], 'a PUT that echoes the id: its row must be read')
    const unknownFirst = await traced(admin, spans, 'PATCH', path, { if_only: true })
    t.equal(unknownFirst.status, 422)
    t.same(unknownFirst.writes, ['transaction'], 'an invalid body: the transaction says 404 or 422')
    t.same((await feed(api)).map((e) => e.type), ['products.created', 'products.updated'], 'events only of what was written')
  })

  t.test(`${kind}: an owner's change is one statement on condition that the row is theirs; another's is the transaction's 403`, async (t) => {
    const { api, spans } = await tracedApi(t, kind)
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const created = await traced(alice.api, spans, 'POST', `${V1}/orders`, {})
    t.equal(created.status, 201)
    t.same(created.writes, ['statement'])
    t.equal(created.body.user_id, alice.id)
    const path = `${V1}/orders/${created.body.id}`
    const etag = created.headers.get('etag')!
    const noted = await traced(alice.api, spans, 'PATCH', path, { note: 'Ring twice' }, { 'if-match': etag })
    t.equal(noted.status, 200)
    t.same(noted.writes, ['statement'], 'the owner, with If-Match')
    const required = await traced(alice.api, spans, 'PATCH', path, { note: 'x' })
    t.equal(required.status, 428, 'If-Match is required here')
    t.same(required.writes, ['transaction'])
    const other = await traced(bob.api, spans, 'PATCH', path, { note: 'Mine now' }, { 'if-match': noted.headers.get('etag')! })
    t.equal(other.status, 403, "someone else's order, even with its ETag")
    t.same(other.writes, ['statement', 'transaction'])
    const moved = await traced(alice.api, spans, 'PATCH', path, { status: 'cancelled' }, { 'if-match': noted.headers.get('etag')! })
    t.equal(moved.status, 200, 'a move')
    t.same(moved.writes, ['transaction'], 'has its guard and effect in the transaction')
    t.same((await feed(api)).filter((e) => e.item_id === created.body.id).map((e) => e.type), ['orders.created', 'orders.updated', 'orders.updated', 'orders.status_changed'])
  })

  t.test(`${kind}: a write with a parent, a hook or a write-only field runs in the transaction`, async (t) => {
    const { api, spans } = await tracedApi(t, kind)
    const product = (await api.admin.post(`${V1}/products`, productBody())).body
    const review = await traced(api.admin, spans, 'POST', `${V1}/products/${product.id}/reviews`, { rating: 4, title: 'Good', body: 'Holds tea.' })
    t.equal(review.status, 201)
    t.same(review.writes, ['transaction'], 'a review: its product keeps figures of it')
    const user = await traced(api.admin, spans, 'POST', `${V1}/users`, { email: 'hook@example.com', name: 'Hook', password: 'a long enough password' })
    t.equal(user.status, 201)
    t.same(user.writes, ['transaction'], 'a user: a hook')
  })
}

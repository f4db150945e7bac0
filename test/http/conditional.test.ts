// Conditional requests and caching (RFC 9110 §13, RFC 9111): standards checklist CACHE-01 to CACHE-19.
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import pg from 'pg'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { products } from '../../src/collections/products/index.js'
import { reviews } from '../../src/collections/reviews/index.js'
import { defineCollection } from '../../src/resources/collection.js'
import { bearer, eachDatabase, readsSeen, startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'

const ETAG = /^"v\d+\.[0-9a-z]+(\.[0-9a-z]+)?"$/
/** A page's hash, then how far the event tail had read before it and its request's key (src/resources/revalidation.ts). */
const LIST_ETAG = /^"[A-Za-z0-9_-]{27}@\d+\.[\w-]{12}"$/
const pageOf = (tag: string) => tag.split('@')[0]
const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

const redis = await new Promise<boolean>((resolve) => {
  const socket = connect(6379, '127.0.0.1', () => (socket.end(), resolve(true)))
  socket.on('error', () => resolve(false))
})

/** A product the admin creates, and the admin's answer. */
async function product(api: Api, overrides: Record<string, unknown> = {}) {
  const created = await api.admin.post(`${V1}/products`, productBody(overrides))
  return { path: `${V1}/products/${created.body.id as string}`, created }
}

t.test('an item carries a strong ETag and Last-Modified, equal until it changes (CACHE-01, 02, 03)', (t) =>
  eachDatabase(t, async (t, api) => {
    const { path } = await product(api)
    const first = await api.anonymous.get(path)
    const etag = first.headers.get('etag')!
    t.match(etag, ETAG, 'a quoted strong tag')
    const lastModified = first.headers.get('last-modified')!
    t.match(lastModified, IMF_FIXDATE)
    t.equal(lastModified, new Date(first.body.updated_at).toUTCString(), 'Last-Modified is updated_at, in whole seconds')
    t.ok(Date.parse(lastModified) <= Date.parse(first.headers.get('date')!), 'never later than Date')
    t.equal((await api.anonymous.get(path)).headers.get('etag'), etag, 'the same representation, the same tag')
    const admin = await api.admin.get(path)
    t.ok('cost' in admin.body && !('cost' in first.body), 'an admin sees cost, others do not')
    t.not(admin.headers.get('etag'), etag, 'so their representations have different tags')
    t.equal((await api.anonymous.get(path, { 'if-none-match': admin.headers.get('etag')! })).status, 200, "the admin's tag does not validate the other")

    // Another instance on the same database (as after a restart) computes the same tag.
    const other = await buildApp(testConfig({ migrateOnStart: false }), { database: api.db })
    t.teardown(() => other.close())
    t.equal((await other.inject({ url: path })).headers.etag, etag, 'identical on another instance')

    await api.admin.patch(path, { stock: 7 })
    const changed = (await api.anonymous.get(path)).headers.get('etag')
    t.not(changed, etag, 'a changed field changes the tag')
    await api.admin.post(`${path}/reviews`, { rating: 5, title: 'Good' })
    const reviewed = await api.anonymous.get(path)
    t.not(reviewed.headers.get('etag'), changed, 'related data (review_count) changes the tag')
    t.ok(reviewed.body.updated_at > first.body.updated_at, 'and moves updated_at, so Last-Modified follows')
  }),
)

t.test('If-None-Match: 304 without a body, with the headers of the 200 (CACHE-04, 05, 06)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api)
    const ok = await admin.get(path)
    const etag = ok.headers.get('etag')!
    const notModified = await admin.get(path, { 'if-none-match': etag })
    t.equal(notModified.status, 304)
    t.equal(notModified.text, '', 'no body')
    for (const name of ['etag', 'cache-control', 'vary', 'last-modified']) {
      t.equal(notModified.headers.get(name), ok.headers.get(name), `the 304 has the 200's ${name}`)
    }
    t.equal((await admin.get(path, { 'if-none-match': `W/${etag}` })).status, 304, 'weak comparison')
    t.equal((await admin.get(path, { 'if-none-match': `"x", ${etag}` })).status, 304, 'a list')
    t.equal((await admin.get(path, { 'if-none-match': '*' })).status, 304, '* matches an existing item')
    t.equal((await admin.get(path, { 'if-none-match': '"other"' })).status, 200, 'no match: 200')
    const future = new Date(Date.now() + 3_600_000).toUTCString()
    const both = await admin.get(path, { 'if-none-match': '"other"', 'if-modified-since': future })
    t.equal(both.status, 200, 'If-None-Match decides; If-Modified-Since is then ignored')
    t.same(both.body, ok.body)
  }),
)

t.test('If-Modified-Since (CACHE-07, 08)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api)
    const ok = await admin.get(path)
    const lastModified = ok.headers.get('last-modified')!
    t.equal((await admin.get(path, { 'if-modified-since': lastModified })).status, 304, 'its own Last-Modified sent back: 304')
    t.equal((await admin.get(path, { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })).status, 304, 'later: 304')
    t.equal((await admin.get(path, { 'if-modified-since': 'Thu, 01 Jan 2015 00:00:00 GMT' })).status, 200, 'earlier: 200')
    for (const date of ['yesterday-ish', '2099', '0', '2099-01-01T00:00:00Z']) {
      t.equal((await admin.get(path, { 'if-modified-since': date })).status, 200, `not an HTTP date, ignored: ${date}`)
    }
    const later = new Date(Date.now() + 60_000)
    const rfc850 = later.toUTCString().replace(/^(\w{3}), (\d{2}) (\w{3}) \d{2}(\d{2})/, (_m, _d, day, month, year) => `Sunday, ${day}-${month}-${year}`)
    t.equal((await admin.get(path, { 'if-modified-since': rfc850 })).status, 304, `the obsolete RFC 850 form: ${rfc850}`)
    const patched = await admin.patch(path, { stock: 3 }, { 'if-modified-since': new Date(Date.now() + 60_000).toUTCString() })
    t.equal(patched.status, 200, 'ignored on a write')
    t.equal(patched.body.stock, 3)
  }),
)

t.test('HEAD answers as GET does: validators, 304 (RFC 9110 §9.3.2)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api)
    const etag = (await admin.get(path)).headers.get('etag')!
    const head = await admin.request('HEAD', path)
    t.equal(head.status, 200)
    t.equal(head.headers.get('etag'), etag)
    t.equal((await admin.request('HEAD', path, { headers: { 'if-none-match': etag } })).status, 304)
    const list = await admin.get(`${V1}/products`)
    t.equal((await admin.request('HEAD', `${V1}/products`, { headers: { 'if-none-match': list.headers.get('etag')! } })).status, 304)
  }),
)

t.test('preconditions never hide other outcomes (CACHE-09)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const missing = `${V1}/products/0190d8a0-0000-7000-8000-000000000000`
    t.equal((await admin.get(missing, { 'if-none-match': '*' })).status, 404)
    t.equal((await admin.patch(missing, { stock: 1 }, { 'if-match': '*' })).status, 404)
    const { path } = await product(api)
    const etag = (await admin.get(path)).headers.get('etag')!
    const invalid = await admin.patch(path, { stock: -1 }, { 'if-match': '"stale"' })
    t.equal(invalid.status, 422, 'an invalid body is a 422 before a failed precondition')
    t.equal((await admin.patch(path, { stock: 1 }, { 'if-match': etag })).status, 200)
  }),
)

t.test('If-Match and If-Unmodified-Since on writes: 412 and nothing written (CACHE-10, 11, 12, 13)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api, { stock: 1 })
    let current = await admin.get(path)
    let etag = current.headers.get('etag')!

    const stale = await admin.patch(path, { stock: 2 }, { 'if-match': '"stale"' })
    t.equal(stale.status, 412)
    t.equal(stale.body.error.code, 'PRECONDITION_FAILED')
    t.equal(stale.headers.get('content-location'), null, 'an error is not the item\'s representation')
    const failedRead = await admin.get(path, { 'if-match': '"stale"' })
    t.equal(failedRead.status, 412, 'If-Match on a GET')
    t.equal(failedRead.headers.get('cache-control'), 'no-store', 'an error is never cacheable')
    t.equal(failedRead.headers.get('etag'), null)
    const identity = await admin.put(path, { ...current.body, id: '0190d8a0-0000-7000-8000-000000000000' }, { 'if-match': '"stale"' })
    t.equal(identity.status, 422, 'a PUT changing the id is a 422 before a 412')
    t.equal((await admin.patch(path, { stock: 2 }, { 'if-match': `W/${etag}` })).status, 412, 'a weak tag never matches strongly')
    t.equal((await admin.get(path)).body.stock, 1, 'nothing was written')

    const written = await admin.patch(path, { stock: 2 }, { 'if-match': `"x", ${etag}` })
    t.equal(written.status, 200, 'a list with the current tag')
    t.equal((await admin.patch(path, { stock: 3 }, { 'if-match': etag })).status, 412, 'the tag it replaced is now stale')
    t.equal((await admin.patch(path, { stock: 3 }, { 'if-match': '*' })).status, 200, '* matches any current item')

    current = await admin.get(path)
    const before = 'Thu, 01 Jan 2015 00:00:00 GMT'
    t.equal((await admin.patch(path, { stock: 4 }, { 'if-unmodified-since': before })).status, 412, 'modified since: 412')
    t.equal((await admin.patch(path, { stock: 4 }, { 'if-unmodified-since': current.headers.get('last-modified')! })).status, 200, 'unmodified since its Last-Modified')
    etag = (await admin.get(path)).headers.get('etag')!
    t.equal((await admin.patch(path, { stock: 5 }, { 'if-match': etag, 'if-unmodified-since': before })).status, 200, 'If-Match present: If-Unmodified-Since ignored')
    t.equal((await admin.patch(path, { stock: 6 }, { 'if-unmodified-since': 'not a date' })).status, 200, 'an invalid date is ignored')

    const body = { ...productBody(), stock: 9 }
    t.equal((await admin.put(path, body, { 'if-none-match': '*' })).status, 412, 'PUT with If-None-Match: * on an existing item')
    const fresh = new Date(Date.now() + 60_000).toUTCString()
    t.equal((await admin.put(path, body, { 'if-match': '"stale"', 'if-unmodified-since': fresh })).status, 412, 'If-Match is evaluated first')
    t.equal((await admin.get(path)).body.stock, 6, 'none of the refused writes wrote')

    const deleted = await admin.delete(path, { 'if-match': '"stale"' })
    t.equal(deleted.status, 412, 'a stale DELETE')
    t.equal((await admin.get(path)).status, 200, 'the item is still there')
    t.equal((await admin.delete(path, { 'if-match': (await admin.get(path)).headers.get('etag')! })).status, 204)
    t.equal((await admin.get(path)).status, 404)
  }),
)

t.test('writes answer with the new validators and Content-Location (CACHE-14)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path, created } = await product(api)
    t.match(created.headers.get('etag'), ETAG)
    t.ok(created.headers.get('last-modified'))
    t.equal(created.headers.get('etag'), (await admin.get(path)).headers.get('etag'), 'the 201 has the tag a GET then gives')
    const patched = await admin.patch(path, { stock: 11 })
    t.equal(patched.headers.get('etag'), (await admin.get(path)).headers.get('etag'))
    t.equal(patched.headers.get('content-location'), path)
    const replaced = await admin.put(path, { ...productBody(), stock: 12 })
    t.equal(replaced.headers.get('etag'), (await admin.get(path)).headers.get('etag'))
    t.equal(replaced.headers.get('content-location'), path)
    const unchanged = await admin.patch(path, { stock: 12 })
    t.equal(unchanged.headers.get('etag'), replaced.headers.get('etag'), 'a write that changes nothing keeps the tag')
  }),
)

t.test('Cache-Control and Vary (CACHE-15, 16, 17)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api)
    const anonymous = await api.anonymous.get(path)
    t.equal(anonymous.headers.get('cache-control'), 'public, max-age=60', 'anonymous product reads are cacheable')
    t.match(anonymous.headers.get('vary'), /Accept/)
    t.match(anonymous.headers.get('vary'), /Authorization, Cookie/, 'and vary on credentials')
    t.equal((await api.anonymous.get(`${V1}/products`)).headers.get('cache-control'), 'public, max-age=60')
    t.equal((await admin.get(path)).headers.get('cache-control'), 'no-store', 'never public with a bearer token')
    // With a cookie (even one that names no session): never public. Bearer tokens: test/auth/tokens.test.ts.
    t.equal((await api.as({ cookie: 'session=x' }).get(path)).headers.get('cache-control'), 'no-store', 'never public with a cookie')
    t.equal((await admin.get(`${path}/reviews`)).headers.get('cache-control'), 'no-store', 'reviews declare no caching')
    t.equal((await admin.patch(path, { stock: 1 })).headers.get('cache-control'), 'no-store', 'writes')
    t.equal((await admin.get(`${V1}/products/nope`)).headers.get('cache-control'), 'no-store', '404')
    t.equal((await admin.request('PUT', `${V1}/products`, { body: {} })).headers.get('cache-control'), 'no-store', '405')
  }),
)

t.test('list pages carry an ETag of their items, total and links (CACHE-19)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api, { name: 'a' })
    await product(api, { name: 'b' })
    const url = `${V1}/products?sort=name&size=1`
    const page = await admin.get(url)
    const etag = page.headers.get('etag')!
    t.match(etag, LIST_ETAG)
    t.equal(page.headers.get('last-modified'), null, 'a list has no Last-Modified')
    t.equal((await admin.get(url, { 'if-none-match': etag })).status, 304)
    t.equal((await admin.get(`${V1}/products?sort=name&size=2`)).headers.get('etag') === etag, false, 'another page, another tag')
    await product(api, { name: 'c' })
    const grown = await admin.get(url)
    t.same(grown.body, page.body, 'the same item on the page')
    t.not(grown.headers.get('etag'), etag, 'but a new total and last link: a new tag')
    await admin.patch(path, { price: 99 })
    t.not((await admin.get(url)).headers.get('etag'), grown.headers.get('etag'), 'an item on the page changed')
  }),
)

/**
 * Revalidates `url` as a cache does, keeping the tag of each answer, until one comes without the
 * page being read (the event tail has caught up with every write so far); returns that answer
 * and the tag it was sent.
 */
async function revalidatedWithoutQuery(api: Api, url: string, etag: string) {
  const seen = readsSeen(api)
  let sent = etag
  return until('a revalidation without the page query', async () => {
    seen.length = 0
    const answer = await api.get(url, { 'if-none-match': sent })
    if (seen.length === 0) return { answer, sent }
    sent = answer.headers.get('etag')!
    return undefined
  })
}

t.test('a list revalidates without its query while nothing it shows has changed (DESIGN "Reading")', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const { path } = await product(api, { name: 'a' })
    const url = `${V1}/products?sort=name`
    const page = await admin.get(url)
    const { answer, sent: etag } = await revalidatedWithoutQuery(admin, url, page.headers.get('etag')!)
    t.equal(answer.status, 304, 'not modified, and no statement read the page')
    t.equal(answer.headers.get('etag'), etag, 'under the same tag')
    t.equal(pageOf(etag), pageOf(page.headers.get('etag')!), 'the page of the first read')
    t.equal(answer.text, '')
    t.equal(answer.headers.get('cache-control'), page.headers.get('cache-control'), 'with the caching headers of the 200')
    t.equal(answer.headers.get('vary'), page.headers.get('vary'))

    // A write on this instance: the very next revalidation reads the page again.
    await admin.patch(path, { price: 99 })
    const changed = await admin.get(url, { 'if-none-match': etag })
    t.equal(changed.status, 200, 'a write is seen at once, not after the tail')
    t.equal(changed.body[0].price, 99)
    t.not(pageOf(changed.headers.get('etag')!), pageOf(etag))

    // A change to what the page embeds (a review of the product moves its rating) is a change of the page.
    const embedded = `${V1}/products?sort=name&include=reviews`
    const before = await admin.get(embedded)
    const { sent: beforeTag } = await revalidatedWithoutQuery(admin, embedded, before.headers.get('etag')!)
    const review = await admin.post(`${path}/reviews`, { rating: 4, title: 'Good', body: 'A good mug.' })
    t.equal(review.status, 201, 'a review of the product')
    const after = await admin.get(embedded, { 'if-none-match': beforeTag })
    t.equal(after.status, 200)
    t.equal(after.body[0].reviews.length, 1, 'the new review is embedded')
  }),
)

t.test('a list tag is current only for its own request and caller', (t) =>
  eachDatabase(t, async (t, api) => {
    await product(api, { name: 'a' })
    await product(api, { name: 'b' })
    const first = await api.anonymous.get(`${V1}/products?sort=name&size=1`)
    const { sent: etag } = await revalidatedWithoutQuery(api.anonymous, `${V1}/products?sort=name&size=1`, first.headers.get('etag')!)
    // Another page with this tag: read, and not the same page.
    const seen = readsSeen(api)
    const second = await api.anonymous.get(`${V1}/products?sort=name&size=1&page=2`, { 'if-none-match': etag })
    t.equal(second.status, 200)
    t.equal(second.body[0].name, 'b')
    t.ok(seen.some((text) => text.includes('FROM "products"')), 'the page was read')
    // Another caller with the same URL: read, then compared by what it would receive.
    seen.length = 0
    const customer = await api.newUser()
    const theirs = await customer.api.get(`${V1}/products?sort=name&size=1`, { 'if-none-match': etag })
    t.ok(seen.some((text) => text.includes('FROM "products"')), 'their page was read')
    t.equal(theirs.status, 304, 'the same page as the anonymous one, so still not modified')
    t.equal(pageOf(theirs.headers.get('etag')!), pageOf(etag))
    t.not(theirs.headers.get('etag'), etag, 'under a tag of their own request')
  }),
)

t.test('after a write elsewhere in the log, an unchanged page is still a 304, under the tag of now', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    await product(api, { name: 'a' })
    const url = `${V1}/products?name=a`
    const { sent: etag } = await revalidatedWithoutQuery(admin, url, (await admin.get(url)).headers.get('etag')!)
    await product(api, { name: 'b' })
    const statuses = new Set<number>()
    // Until the tail has read the new product: each answer reads the page, finds it the same.
    const again = await until('a tag of after the write', async () => {
      const answer = await admin.get(url, { 'if-none-match': etag })
      statuses.add(answer.status)
      return answer.headers.get('etag') === etag ? undefined : answer
    })
    t.same([...statuses], [304], 'the page is what the client has')
    t.equal(pageOf(again.headers.get('etag')!), pageOf(etag), 'the same page')
    t.equal((await admin.get(url, { 'if-match': etag })).status, 200, 'If-Match compares the page, whenever it was read')
  }),
)

t.test('a write on another instance reaches this one by the tail (PostgreSQL)', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const one = await startApi(t, 'postgres')
  const other = await startApi(t, 'postgres', undefined, { besides: one })
  const created = await one.admin.post(`${V1}/products`, productBody({ name: 'a' }))
  const url = `${V1}/products?sort=name`
  const { sent: etag } = await revalidatedWithoutQuery(one.admin, url, (await one.admin.get(url)).headers.get('etag')!)
  const changed = await other.admin.patch(`${V1}/products/${created.body.id as string}`, { price: 42 })
  t.equal(changed.status, 200)
  // The other instance's write is in the log; this one's tail reads it within TAIL_EVERY_MS.
  const seen = await until('the other instance\u2019s write to reach this one', async () => {
    const answer = await one.admin.get(url, { 'if-none-match': etag })
    return answer.status === 200 ? answer : undefined
  })
  t.equal(seen.body[0].price, 42)
})

t.test('what a page embeds two steps away, changed on another instance, is a change of the page (PostgreSQL)', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const one = await startApi(t, 'postgres')
  const other = await startApi(t, 'postgres', undefined, { besides: one })
  const mug = await one.admin.post(`${V1}/products`, productBody({ name: 'Mug', status: 'active', stock: 5 }))
  const order = await one.admin.post(`${V1}/orders`, {})
  t.equal((await one.admin.post(`${V1}/orders/${order.body.id as string}/items`, { product_id: mug.body.id, quantity: 1 })).status, 201)
  const url = `${V1}/orders?include=items.product`
  const { sent: etag } = await revalidatedWithoutQuery(one.admin, url, (await one.admin.get(url)).headers.get('etag')!)
  // Renamed on the other instance: only this one's tail tells it.
  t.equal((await other.admin.patch(`${V1}/products/${mug.body.id as string}`, { name: 'Big mug' })).status, 200)
  const read = await until('the rename to reach the page', async () => {
    const answer = await one.admin.get(url, { 'if-none-match': etag })
    return answer.status === 200 ? answer : undefined
  })
  t.equal(read.body[0].items[0].product.name, 'Big mug')
})

t.test('a write of this instance held back from the tail by an older open transaction is still seen (PostgreSQL)', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres')
  const { path } = await product(api, { name: 'a' })
  const url = `${V1}/products?sort=name`
  const { sent: etag } = await revalidatedWithoutQuery(api.admin, url, (await api.admin.get(url)).headers.get('etag')!)
  // An older transaction that may still write events: the tail reads nothing past it.
  const blocker = new pg.Client({ connectionString: (api.databaseConfig as { url: string }).url })
  await blocker.connect()
  t.teardown(() => blocker.end())
  await blocker.query('BEGIN; LOCK TABLE events IN ROW EXCLUSIVE MODE; SELECT pg_current_xact_id()')
  t.equal((await api.admin.patch(path, { price: 99 })).status, 200)
  // The tail reads every 250 ms meanwhile, and each of its reads ends below the blocker's transaction.
  const statuses = new Set<number>()
  for (let i = 0; i < 30; i++) {
    statuses.add((await api.admin.get(url, { 'if-none-match': etag })).status)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  t.same([...statuses], [200], 'never the page from before the write')
  await blocker.query('ROLLBACK')
})

t.test('lists of what the service changes without events (webhooks, their deliveries) are always read to be revalidated', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!)
  await product(api)
  const webhook = await api.admin.post(`${V1}/webhooks`, { url: 'https://hooks.example/shop', events: ['products.created'] })
  t.equal(webhook.status, 201)
  for (const url of [`${V1}/webhooks`, `${V1}/webhooks/${webhook.body.id as string}/deliveries`]) {
    const etag = (await api.admin.get(url)).headers.get('etag')!
    // The tail has read every write so far: a products list revalidates without its query.
    const products = `${V1}/products`
    await revalidatedWithoutQuery(api.admin, products, (await api.admin.get(products)).headers.get('etag')!)
    const seen = readsSeen(api)
    const again = await api.admin.get(url, { 'if-none-match': etag })
    t.equal(again.status, 304, url)
    t.ok(seen.length > 0, `${url}: the page was read`)
  }
})

t.test('a caller who wrote on another instance never gets a stale 304 (PostgreSQL, Redis)', { skip: !databaseKinds().includes('postgres') ? 'needs PostgreSQL' : !redis && 'needs Redis on 127.0.0.1:6379' }, async (t) => {
  // Two instances sharing Redis: the writer's position is kept there.
  const config = { redisUrl: 'redis://127.0.0.1:6379', redisKeyPrefix: `conditional-${randomBytes(6).toString('hex')}:` }
  const one = await startApi(t, 'postgres', undefined, { config })
  const other = await startApi(t, 'postgres', undefined, { config, besides: one })
  const writer = await one.newUser({ roles: ['admin'] })
  const [here, there] = [writer.api, other.as(bearer(writer.token))]
  const created = await here.post(`${V1}/products`, productBody({ name: 'a' }))
  const url = `${V1}/products?sort=name`
  const { sent: etag } = await revalidatedWithoutQuery(there, url, (await there.get(url)).headers.get('etag')!)
  // Written on one, read at once on the other, before its tail can have read the write.
  t.equal((await here.patch(`${V1}/products/${created.body.id as string}`, { price: 42 })).status, 200)
  const read = await there.get(url, { 'if-none-match': etag })
  t.equal(read.status, 200, 'the page is read again')
  t.equal(read.body[0].price, 42)
})

t.test('one version of an item, one writer: parallel If-Match writes (PostgreSQL)', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres')
  const admin = api.admin
  const { path } = await product(api, { stock: 0 })
  const etag = (await admin.get(path)).headers.get('etag')!
  const writers = 8
  const results = await Promise.all(Array.from({ length: writers }, (_, i) => admin.patch(path, { stock: i + 1 }, { 'if-match': etag })))
  const statuses = results.map((r) => r.status).sort()
  t.same(statuses, [200, ...Array(writers - 1).fill(412)], 'exactly one succeeds')
  const winner = results.find((r) => r.status === 200)!
  t.equal((await admin.get(path)).body.stock, winner.body.stock, 'and its value is the one stored')

  const next = (await admin.get(path)).headers.get('etag')!
  const deletes = await Promise.all(Array.from({ length: 4 }, () => admin.delete(path, { 'if-match': next })))
  const deleted = deletes.map((r) => r.status)
  t.equal(deleted.filter((s) => s === 204).length, 1, 'one conditional delete removes it')
  t.ok(deleted.every((s) => s === 204 || s === 404 || s === 412), 'the others find it gone or changed')
})

t.test('a collection can require If-Match: 428 without it (orders will)', async (t) => {
  const guarded = defineCollection({ ...products.options, requireIfMatch: true })
  const api = await startApi(t, databaseKinds()[0]!, undefined, { collections: [guarded, reviews] })
  const admin = api.admin
  const { path } = await product(api)
  const missing = await admin.patch(path, { stock: 1 })
  t.equal(missing.status, 428)
  t.equal(missing.body.error.code, 'PRECONDITION_REQUIRED')
  t.equal((await admin.delete(path)).status, 428)
  t.equal((await admin.put(path, productBody())).status, 428)
  t.equal((await admin.patch(path, { stock: -1 })).status, 422, 'validation comes first')
  t.equal((await admin.patch(`${V1}/products/0190d8a0-0000-7000-8000-000000000000`, { stock: 1 })).status, 404, 'and the item must exist')
  const etag = (await admin.get(path)).headers.get('etag')!
  t.equal((await admin.patch(path, { stock: 1 }, { 'if-match': etag })).status, 200)
})

// A nested collection: /products/{id}/reviews (spec "Related sub-collection"; RES-08..RES-11, STATE-08).
import pg from 'pg'
import t from 'tap'
import { eachDatabase, startApi, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'

const MISSING = '01890000-0000-7000-8000-000000000000'

/** A product the admin creates. */
async function product(api: Api): Promise<string> {
  return (await api.admin.post(`${V1}/products`, productBody())).body.id
}

/** A review by a new user: a user reviews a product once. */
async function reviewAsNewUser(api: Api, productId: string, body: object) {
  return (await api.newUser()).api.post(`${V1}/products/${productId}/reviews`, body)
}

t.test('reviews are created and listed under their product only (RES-08)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const [a, b] = [await product(api), await product(api)]
    const created = await admin.post(`${V1}/products/${a}/reviews`, { rating: 4, title: 'Good', body: 'Holds tea.' })
    t.equal(created.status, 201)
    t.equal(created.headers.get('location'), `${V1}/products/${a}/reviews/${created.body.id}`)
    t.match(created.body, { product_id: a, rating: 4, title: 'Good', body: 'Holds tea.', author_id: String })
    await admin.post(`${V1}/products/${b}/reviews`, { rating: 1 })
    const list = await admin.get(`${V1}/products/${a}/reviews`)
    t.equal(list.status, 200)
    t.same(list.body, [{ id: created.body.id, rating: 4, title: 'Good', author_id: created.body.author_id }], 'summary fields only')
    t.equal(list.headers.get('x-total-count'), '1')
    t.match(list.headers.get('link'), `<${V1}/products/${a}/reviews?page=1>; rel="first"`)
    t.same((await admin.get(created.headers.get('location')!)).body, created.body)
  }),
)

t.test('an unknown or malformed parent is 404, not an empty list (RES-08)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    for (const parent of [MISSING, 'nope']) {
      const list = await admin.get(`${V1}/products/${parent}/reviews`)
      t.equal(list.status, 404, `list under ${parent}`)
      t.equal(list.body.error.code, 'NOT_FOUND')
      const create = await admin.post(`${V1}/products/${parent}/reviews`, { rating: 3 })
      t.equal(create.status, 404, `create under ${parent}`)
    }
  }),
)

t.test("an item is reachable only under its own parent: another product's path is 404 for every method (RES-09)", (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const [a, b] = [await product(api), await product(api)]
    const review = (await admin.post(`${V1}/products/${a}/reviews`, { rating: 5 })).body
    const wrong = `${V1}/products/${b}/reviews/${review.id}`
    t.equal((await admin.get(wrong)).status, 404, 'GET')
    t.equal((await admin.put(wrong, { rating: 1 })).status, 404, 'PUT')
    t.equal((await admin.patch(wrong, { rating: 1 })).status, 404, 'PATCH')
    t.equal((await admin.delete(wrong)).status, 404, 'DELETE')
    t.same((await admin.get(`${V1}/products/${a}/reviews/${review.id}`)).body, review, 'unchanged')
  }),
)

t.test('the parent comes from the path; a product_id or author_id in the body is read-only (RES-10, SEC-10)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const [a, b] = [await product(api), await product(api)]
    const res = await admin.post(`${V1}/products/${a}/reviews`, { rating: 2, product_id: b, author_id: MISSING })
    t.equal(res.status, 422)
    t.same(res.body.error.details, [
      { field: 'product_id', reason: 'is read-only' },
      { field: 'author_id', reason: 'is read-only' },
    ])
    const review = (await admin.post(`${V1}/products/${a}/reviews`, { rating: 2 })).body
    const moved = await admin.patch(`${V1}/products/${a}/reviews/${review.id}`, { product_id: b })
    t.equal(moved.status, 422, 'a patch never re-parents')
    t.equal((await admin.get(`${V1}/products/${b}/reviews`)).body.length, 0)
  }),
)

t.test('deeper nesting is not served (RES-11)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const a = await product(api)
    const review = (await admin.post(`${V1}/products/${a}/reviews`, { rating: 2 })).body
    const res = await admin.get(`${V1}/products/${a}/reviews/${review.id}/comments`)
    t.equal(res.status, 404)
    t.equal(res.body.error.code, 'NOT_FOUND')
  }),
)

t.test("the product's detail carries review_count and rating_average; its list does not (RES-05)", (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const a = await product(api)
    for (const rating of [5, 4, 4]) await reviewAsNewUser(api, a, { rating })
    const detail = await admin.get(`${V1}/products/${a}`)
    t.equal(detail.body.review_count, 3)
    t.equal(detail.body.rating_average, 4.33, 'rounded to two places')
    const review = (await admin.get(`${V1}/products/${a}/reviews?sort=rating`)).body[0]
    await admin.patch(`${V1}/products/${a}/reviews/${review.id}`, { rating: 1 })
    t.match((await admin.get(`${V1}/products/${a}`)).body, { review_count: 3, rating_average: 3.33 }, 'follows changes')
    t.notOk('review_count' in (await admin.get(`${V1}/products`)).body[0], 'not in the summary')
  }),
)

t.test('reviews validate their fields and report every failure (ERR-03)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const a = await product(api)
    const res = await admin.post(`${V1}/products/${a}/reviews`, { rating: 6, title: 'x'.repeat(121), body: 5 })
    t.equal(res.status, 422)
    t.same(res.body.error.details.map((d: { field: string }) => d.field), ['rating', 'title', 'body'])
    const fraction = await admin.post(`${V1}/products/${a}/reviews`, { rating: 4.5 })
    t.same(fraction.body.error.details, [{ field: 'rating', reason: 'must be an integer' }])
  }),
)

t.test('deleting a product for good deletes its reviews (STATE-08)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const a = await product(api)
    const review = (await admin.post(`${V1}/products/${a}/reviews`, { rating: 3 })).body
    // To the trash (test/conventions/trash.test.ts), then out of it for good.
    t.equal((await admin.delete(`${V1}/products/${a}`)).status, 204)
    t.equal((await admin.delete(`${V1}/products/${a}?trashed=only`)).status, 204)
    t.equal((await admin.get(`${V1}/products/${a}/reviews/${review.id}`)).status, 404)
    t.equal((await admin.get(`${V1}/products/${a}/reviews`)).status, 404)
    const rows = await api.db.withSession((s) => s.query('SELECT count(*)::int AS n FROM reviews'))
    t.same(rows, [{ n: 0 }], 'the rows are gone, not only hidden')
  }),
)

t.test('review list: sorting and filtering by its own fields', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const a = await product(api)
    for (const rating of [2, 5, 3]) await reviewAsNewUser(api, a, { rating })
    const res = await admin.get(`${V1}/products/${a}/reviews?rating[gte]=3&sort=rating&order=desc`)
    t.same(res.body.map((r: { rating: number }) => r.rating), [5, 3])
    t.equal(res.headers.get('x-total-count'), '2')
    const bad = await admin.get(`${V1}/products/${a}/reviews?product_id=${a}`)
    t.equal(bad.status, 400, 'the parent is not a filter of its own list')
    t.equal((await admin.get(`${V1}/products/${a}/reviews?rating=99999`)).status, 400, 'a rating no smallint holds is a 400, not a 500')
    t.equal((await admin.get(`${V1}/products/${a}/reviews?author_id=nope`)).status, 400)
    t.same((await admin.get(`${V1}/products/${a}/reviews?author_id=01890000-0000-7000-8000-000000000000`)).body, [], 'uuid filters')
  }),
)

t.test('review statistics stay exact through creates, updates, deletes and concurrent writes', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const [a, b] = [await product(api), await product(api)]
    const ratings = [5, 4, 3, 5, 1, 2, 4, 4, 5, 3]
    const created = await Promise.all(ratings.map((rating) => reviewAsNewUser(api, a, { rating })))
    t.ok(created.every((r) => r.status === 201))
    const sum = ratings.reduce((x, y) => x + y, 0)
    t.match((await admin.get(`${V1}/products/${a}`)).body, { review_count: 10, rating_average: Math.round((sum / 10) * 100) / 100 })
    await admin.delete(`${V1}/products/${a}/reviews/${created[0]!.body.id}`)
    await admin.put(`${V1}/products/${a}/reviews/${created[1]!.body.id}`, { rating: 1 })
    t.match((await admin.get(`${V1}/products/${a}`)).body, { review_count: 9, rating_average: Math.round(((sum - 5 - 4 + 1) / 9) * 100) / 100 })
    t.match((await admin.get(`${V1}/products/${b}`)).body, { review_count: 0, rating_average: null }, 'other products untouched')
    const rows = await api.db.withSession((s) =>
      s.query<{ ok: boolean }>(`SELECT p.review_count = (SELECT count(*) FROM reviews r WHERE r.product_id = p.id)
                                   AND p.rating_total = (SELECT coalesce(sum(rating), 0) FROM reviews r WHERE r.product_id = p.id) AS ok FROM products p`),
    )
    t.ok(rows.every((r) => r.ok), 'the stored counters equal a recount')
    const sorted = await admin.get(`${V1}/products?sort=review_count&order=desc`)
    t.same(sorted.body.map((p: { id: string }) => p.id), [a, b], 'products sort by review_count')
  }),
)

// PostgreSQL only: it takes a second connection, which PGlite has not.
t.test('a parent deleted while a create waits for it: the create is 404 and writes nothing', { skip: !databaseKinds().includes('postgres') && 'no PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres')
  const parent = await product(api)
  const other = new pg.Client({ connectionString: (api.databaseConfig as { url: string }).url })
  await other.connect()
  t.teardown(() => other.end())
  // The delete is made and not yet committed: the create's checks outside its transaction still
  // see the product; its transaction waits for the product, then finds it gone.
  await other.query('BEGIN')
  await other.query('DELETE FROM products WHERE id = $1', [parent])
  const created = api.admin.post(`${V1}/products/${parent}/reviews`, { rating: 5 })
  const watcher = new pg.Client({ connectionString: (api.databaseConfig as { url: string }).url })
  await watcher.connect()
  t.teardown(() => watcher.end())
  await until('the create to wait on the product', async () => {
    const { rows } = await watcher.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    return rows.length > 0 ? true : undefined
  })
  await other.query('COMMIT')
  const res = await created
  t.equal(res.status, 404, 'the parent is gone, as for a list')
  t.equal(res.body.error.code, 'NOT_FOUND')
  t.same(await api.db.query('SELECT id FROM reviews WHERE product_id = $1', [parent]), [], 'no review written')
})

// GET /{collection}/aggregates (DESIGN "Data over time"): counts, sums, averages, least and
// greatest values over the fields a collection declares, grouped and sorted by the group keys,
// with the list's filters, row rules and field rules; at most 1,000 groups; ETag and 304.
import pg from 'pg'
import t from 'tap'
import { products } from '../../src/collections/products/index.js'
import { uuidv7 } from '../../src/ids.js'
import { aggregateSpec } from '../../src/resources/aggregates/spec.js'
import { defineCollection } from '../../src/resources/collection.js'
import type { Field } from '../../src/resources/fields.js'
import { eachDatabase, LOCK_WAIT_TIMEOUT_MS, readsSeen, startApi, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'

const V2 = '/api/v2'
const STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const

interface Seeded {
  user_id: string
  status: string
  /** In cents: the test's sums are exact. */
  cents: number
}

/** Orders written directly, with the totals the test chose (an order's total is otherwise its items' sum). */
async function seedOrders(api: Api, orders: readonly Seeded[]): Promise<void> {
  for (const order of orders) {
    await api.db.query('INSERT INTO orders (id, user_id, status, total, created_at, updated_at) VALUES ($1, $2, $3, $4, now(), now())', [
      uuidv7(), order.user_id, order.status, (order.cents / 100).toFixed(2),
    ])
  }
}

/** What the answer must be, computed here: per status in the enum's order, or over all when `grouped` is false. */
function expected(orders: readonly Seeded[], grouped: boolean) {
  const groups = grouped ? STATUSES.map((status) => [status, orders.filter((o) => o.status === status)] as const).filter(([, of]) => of.length > 0) : [[undefined, orders] as const]
  return groups.map(([status, of]) => {
    const cents = of.map((o) => o.cents)
    const sum = cents.reduce((a, b) => a + b, 0)
    return {
      ...(status === undefined ? {} : { status }),
      count: of.length,
      sum_total: of.length === 0 ? null : sum / 100,
      // Rounded to the cent, as documented (half away from zero; no value here is negative).
      avg_total: of.length === 0 ? null : Math.round(sum / of.length) / 100,
      min_total: of.length === 0 ? null : Math.min(...cents) / 100,
      max_total: of.length === 0 ? null : Math.max(...cents) / 100,
    }
  })
}

const ALL_METRICS = 'metrics=count,sum:total,avg:total,min:total,max:total'

/** Two customers' orders: values whose averages need rounding, and every status but one. */
function ordersOf(alice: string, bob: string): Seeded[] {
  return [
    { user_id: alice, status: 'pending', cents: 1000 },
    { user_id: alice, status: 'pending', cents: 1000 },
    { user_id: alice, status: 'pending', cents: 1001 },
    { user_id: alice, status: 'paid', cents: 2550 },
    { user_id: alice, status: 'delivered', cents: 99_999 },
    { user_id: bob, status: 'paid', cents: 1 },
    { user_id: bob, status: 'paid', cents: 12_345 },
    { user_id: bob, status: 'cancelled', cents: 700 },
    { user_id: bob, status: 'pending', cents: 5 },
  ]
}

t.test('orders: count, sum, average, least and greatest per status, as computed here; a customer aggregates only their own', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const orders = ordersOf(alice.id, bob.id)
    await seedOrders(api, orders)
    const all = await api.admin.get(`${V1}/orders/aggregates?group_by=status&${ALL_METRICS}`)
    t.equal(all.status, 200)
    t.same(all.body, expected(orders, true), "every order, for an admin, by status in the enum's order")
    t.match(all.headers.get('etag'), /^"/, 'an ETag')
    t.equal(all.headers.get('cache-control'), 'no-store', 'an answer that depends on the caller is not cached')
    const mine = await alice.api.get(`${V1}/orders/aggregates?group_by=status&${ALL_METRICS}`)
    t.same(mine.body, expected(orders.filter((o) => o.user_id === alice.id), true), "alice's orders only")
    const bobs = await bob.api.get(`${V1}/orders/aggregates?${ALL_METRICS}`)
    t.same(bobs.body, expected(orders.filter((o) => o.user_id === bob.id), false), "bob's, without a group: one row over them")
    const theirs = await bob.api.get(`${V1}/orders/aggregates?user_id=${alice.id}&${ALL_METRICS}`)
    t.same(theirs.body, [{ count: 0, sum_total: null, avg_total: null, min_total: null, max_total: null }], "a filter on alice's id finds none of bob's: a count of 0, nulls for the rest")
    t.same((await api.admin.get(`${V1}/orders/aggregates`)).body, [{ count: orders.length }], 'metrics defaults to count')
    t.equal((await api.anonymous.get(`${V1}/orders/aggregates`)).status, 401, 'orders need a caller, as their list does')
  }),
)

t.test('several group keys: groups sorted by each in turn; v2 shows amounts as the items do', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const orders = ordersOf(alice.id, bob.id)
    await seedOrders(api, orders)
    const both = await api.admin.get(`${V1}/orders/aggregates?group_by=status,user_id&metrics=count,sum:total`)
    const keys = STATUSES.flatMap((status) =>
      [alice.id, bob.id].sort().flatMap((user) => {
        const of = orders.filter((o) => o.status === status && o.user_id === user)
        return of.length === 0 ? [] : [{ status, user_id: user, count: of.length, sum_total: of.reduce((a, o) => a + o.cents, 0) / 100 }]
      }),
    )
    t.same(both.body, keys, 'by status, then by customer')
    const reversed = await api.admin.get(`${V1}/orders/aggregates?group_by=user_id,status&metrics=sum:total,count`)
    t.same(Object.keys(reversed.body[0]), ['status', 'user_id', 'count', 'sum_total'], 'the keys, then the metrics, each in the order the collection declares them')
    t.same(reversed.body[0], { user_id: [alice.id, bob.id].sort()[0], status: 'pending', ...{ sum_total: reversed.body[0].sum_total, count: reversed.body[0].count } }, 'by customer first')
    const v2 = await alice.api.get(`${V2}/orders/aggregates?group_by=status&metrics=count,sum:total,avg:total,max:total`)
    t.same(v2.body[0], { status: 'pending', count: 3, sum_total: { amount: 30.01, currency: 'USD' }, avg_total: { amount: 10, currency: 'USD' }, max_total: { amount: 10.01, currency: 'USD' } }, 'amounts as v2 shows an order total')
    const empty = await alice.api.get(`${V2}/orders/aggregates?status=shipped&metrics=count,sum:total`)
    t.same(empty.body, [{ count: 0, sum_total: null }], 'null, not an amount, over no items')
  }),
)

t.test("every list filter applies as on the list: brackets, filter= expressions, repeated values", (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const orders = ordersOf(alice.id, bob.id)
    await seedOrders(api, orders)
    const cases: [string, (o: Seeded) => boolean][] = [
      ['total[gte]=10.01', (o) => o.cents >= 1001],
      ['status=paid&status=cancelled', (o) => o.status === 'paid' || o.status === 'cancelled'],
      ['status[ne]=pending&total[lt]=100', (o) => o.status !== 'pending' && o.cents < 10_000],
      [`filter=${encodeURIComponent('status = "paid" OR total > 500')}`, (o) => o.status === 'paid' || o.cents > 50_000],
      [`filter=${encodeURIComponent(`NOT user_id = "${alice.id}"`)}&total[gt]=0.05`, (o) => o.user_id !== alice.id && o.cents > 5],
    ]
    for (const [query, matches] of cases) {
      const answer = await api.admin.get(`${V1}/orders/aggregates?group_by=status&${ALL_METRICS}&${query}`)
      t.equal(answer.status, 200, query)
      t.same(answer.body, expected(orders.filter(matches), true), query)
      // The list with the same filters counts the same orders.
      const list = await api.admin.get(`${V1}/orders?${query}`)
      t.equal(Number(list.headers.get('x-total-count')), orders.filter(matches).length, `the list agrees: ${query}`)
    }
  }),
)

t.test('products: anyone may aggregate the catalogue; cost only an admin; q= and nested reviews', (t) =>
  eachDatabase(t, async (t, api) => {
    const bodies = [
      productBody({ name: 'Blue mug', price: 12.5, cost: 4, stock: 3, status: 'active' }),
      productBody({ name: 'Red mug', price: 9.99, cost: 3.5, stock: 10, status: 'active' }),
      productBody({ name: 'Teapot', price: 34, cost: 20, stock: 1, status: 'active' }),
      productBody({ name: 'Old kettle', price: 25, stock: 0, status: 'archived' }),
      productBody({ name: 'Apron', price: 19, status: 'draft' }),
    ]
    const created = (await api.admin.post(`${V1}/products`, bodies)).body
    const anonymous = await api.anonymous.get(`${V1}/products/aggregates?group_by=status&metrics=count,min:price,max:price,avg:price,sum:stock`)
    t.equal(anonymous.status, 200)
    t.same(anonymous.body, [
      { status: 'draft', count: 1, min_price: 19, max_price: 19, avg_price: 19, sum_stock: 0 },
      { status: 'active', count: 3, min_price: 9.99, max_price: 34, avg_price: 18.83, sum_stock: 14 },
      { status: 'archived', count: 1, min_price: 25, max_price: 25, avg_price: 25, sum_stock: 0 },
    ], 'draft, active, archived: the enum order; (12.50 + 9.99 + 34) / 3 = 18.83')
    t.equal(anonymous.headers.get('cache-control'), 'public, max-age=60', 'as the anonymous list, cacheable')
    const searched = await api.anonymous.get(`${V1}/products/aggregates?q=mug&metrics=count,max:price`)
    t.same(searched.body, [{ count: 2, max_price: 12.5 }], 'q= finds the mugs')
    const contains = await api.anonymous.get(`${V1}/products/aggregates?name[contains]=MUG&price[lt]=10&metrics=count`)
    t.same(contains.body, [{ count: 1 }])
    const customer = await api.newUser()
    for (const [who, client] of [['anonymous', api.anonymous], ['a customer', customer.api]] as const) {
      const refused = await client.get(`${V1}/products/aggregates?group_by=status&metrics=count,avg:cost,max:cost`)
      t.equal(refused.status, 403, `${who} may not aggregate cost`)
      t.equal(refused.body.error.code, 'FORBIDDEN')
      t.same(refused.body.error.details, [{ field: 'metrics', reason: 'cost may only be read by admins' }], 'once for the field, however many of its metrics')
    }
    const admin = await api.admin.get(`${V2}/products/aggregates?status=active&metrics=min:cost,max:cost,avg:cost`)
    t.same(admin.body, [{ min_cost: { amount: 3.5, currency: 'USD' }, max_cost: { amount: 20, currency: 'USD' }, avg_cost: { amount: 9.17, currency: 'USD' } }], 'an admin reads cost, as v2 shows it')
    const unpriced = await api.admin.get(`${V1}/products/aggregates?group_by=status&metrics=count,max:cost&status[ne]=active`)
    t.same(unpriced.body, [{ status: 'draft', count: 1, max_cost: null }, { status: 'archived', count: 1, max_cost: null }], 'null where no item has a cost')
    // Nested: a product's ratings.
    const [teapot, mug] = [created[2].id, created[0].id]
    for (const rating of [5, 4, 5, 2]) await (await api.newUser()).api.post(`${V1}/products/${teapot}/reviews`, { rating })
    await customer.api.post(`${V1}/products/${mug}/reviews`, { rating: 1 })
    const ratings = await api.anonymous.get(`${V1}/products/${teapot}/reviews/aggregates?group_by=rating&metrics=count`)
    t.same(ratings.body, [{ rating: 2, count: 1 }, { rating: 4, count: 1 }, { rating: 5, count: 2 }], "the teapot's ratings, not the mug's")
    const average = await api.anonymous.get(`${V1}/products/${teapot}/reviews/aggregates?metrics=count,avg:rating,min:rating`)
    t.same(average.body, [{ count: 4, avg_rating: 4, min_rating: 2 }])
    t.equal((await api.anonymous.get(`${V1}/products/${teapot}`)).body.rating_average, 4, 'as the product keeps it')
    const unknown = await api.anonymous.get(`${V1}/products/01890000-0000-7000-8000-000000000000/reviews/aggregates`)
    t.equal(unknown.status, 404, 'an unknown product has no reviews to aggregate')
  }),
)

t.test('bad parameters: 400 naming each one, with what is allowed', (t) =>
  eachDatabase(t, async (t, api) => {
    const cases: [string, { field: string; reason: RegExp }[]][] = [
      ['metrics=count,sum:totl', [{ field: 'metrics', reason: /has no metric "sum:totl" \(did you mean sum:total\?\); metrics: count, sum:total, avg:total, min:total, max:total/ }]],
      ['metrics=sum:note', [{ field: 'metrics', reason: /has no metric "sum:note"/ }]],
      ['metrics=sum:status', [{ field: 'metrics', reason: /has no metric "sum:status"/ }]],
      ['metrics=median:total', [{ field: 'metrics', reason: /has no metric "median:total"/ }]],
      ['metrics=count,count', [{ field: 'metrics', reason: /names "count" twice/ }]],
      ['metrics=', [{ field: 'metrics', reason: /must be a comma-separated list of metrics/ }]],
      ['metrics=count&metrics=sum:total', [{ field: 'metrics', reason: /at most once/ }]],
      [`metrics=${'count,'.repeat(101)}count`, [{ field: 'metrics', reason: /at most 500 characters/ }]],
      ['group_by=note', [{ field: 'group_by', reason: /has no groupable field "note"; groupable fields: status, user_id/ }]],
      ['group_by=status,status', [{ field: 'group_by', reason: /names "status" twice/ }]],
      ['group_by=status&sort=status&size=5', [{ field: 'sort', reason: /is not taken by aggregates/ }, { field: 'size', reason: /is not taken by aggregates/ }]],
      ['fields=total&include[items][size]=1', [{ field: 'fields', reason: /is not taken/ }, { field: 'include[items][size]', reason: /is not taken/ }]],
      ['group_by=nope&totl[gt]=1&status=lost', [
        { field: 'group_by', reason: /has no groupable field "nope"/ },
        { field: 'totl[gt]', reason: /is not a known parameter \(did you mean total\[gt\]\?\)/ },
        { field: 'status', reason: /must be one of pending, paid/ },
      ]],
    ]
    for (const [query, details] of cases) {
      const answer = await api.admin.get(`${V1}/orders/aggregates?${query}`)
      t.equal(answer.status, 400, query)
      t.equal(answer.body.error.code, 'INVALID_PARAMETER', query)
      t.match(answer.body.error.details, details, query)
      t.equal(answer.body.error.details.length, details.length, `${query}: every problem, and only those`)
    }
    t.match((await api.anonymous.get(`${V1}/products/aggregates?metrics=sum:price`)).body.error.details, [{ field: 'metrics', reason: /metrics: count, min:price, max:price, avg:price, sum:stock/ }], "each collection's own metrics")
  }),
)

t.test('at most 1,000 groups: one more is a 400 TOO_MANY_GROUPS, never a cut answer', (t) =>
  eachDatabase(t, async (t, api) => {
    // 1,001 customers with an order each, in one statement.
    await api.db.query(
      `WITH u AS (INSERT INTO users (id, email, name, password_hash, roles, created_at, updated_at)
         SELECT gen_random_uuid(), 'many' || i || '@shop.test', 'Many ' || i, 'not-a-password-hash', '{}', now(), now() FROM generate_series(1, 1001) AS i RETURNING id)
       INSERT INTO orders (id, user_id, status, total, created_at, updated_at) SELECT gen_random_uuid(), id, 'pending', 1, now(), now() FROM u`,
      [],
    )
    const tooMany = await api.admin.get(`${V1}/orders/aggregates?group_by=user_id`)
    t.equal(tooMany.status, 400)
    t.equal(tooMany.body.error.code, 'TOO_MANY_GROUPS')
    t.same(tooMany.body.error.details, [{ field: 'group_by', reason: 'makes more than 1000 groups of the matching items' }])
    const first = (await api.admin.get(`${V1}/orders?sort=created_at&size=1`)).body[0]
    const thousand = await api.admin.get(`${V1}/orders/aggregates?group_by=user_id&metrics=count,sum:total&filter=${encodeURIComponent(`NOT user_id = "${first.user_id}"`)}`)
    t.equal(thousand.status, 200, '1,000 groups are answered')
    t.equal(thousand.body.length, 1000)
    const ids = thousand.body.map((group: { user_id: string }) => group.user_id)
    t.same(ids, [...ids].sort(), 'sorted by the key')
    t.ok(thousand.body.every((group: { count: number; sum_total: number }) => group.count === 1 && group.sum_total === 1))
  }),
)

t.test('ETag and 304: revalidated without a query while nothing changed; a new order moves the tag', (t) =>
  eachDatabase(t, async (t, api) => {
    const alice = await api.newUser()
    await alice.api.post(`${V1}/orders`, {})
    const url = `${V1}/orders/aggregates?group_by=status&metrics=count,sum:total`
    const first = await alice.api.get(url)
    t.same(first.body, [{ status: 'pending', count: 1, sum_total: 0 }])
    const seen = readsSeen(api)
    let sent = first.headers.get('etag')!
    // Until the instance's event tail has read alice's order, a revalidation reads the answer.
    const answer = await until('a revalidation without the aggregate query', async () => {
      seen.length = 0
      const again = await alice.api.get(url, { 'if-none-match': sent })
      if (again.status !== 304) return again
      if (seen.length === 0) return again
      sent = again.headers.get('etag')!
      return undefined
    })
    t.equal(answer.status, 304, 'not modified')
    t.equal(answer.text, '', 'without a body')
    t.same(seen, [], 'and without a statement')
    const head = await alice.api.request('HEAD', url)
    t.equal(head.status, 200)
    t.ok(head.headers.get('etag'), 'HEAD carries the ETag')
    const bob = await api.newUser()
    t.equal((await bob.api.get(url, { 'if-none-match': sent })).status, 200, "another caller's request is not alice's answer")
    await alice.api.post(`${V1}/orders`, {})
    const changed = await alice.api.get(url, { 'if-none-match': sent })
    t.equal(changed.status, 200, 'a new order: the answer is read again')
    t.same(changed.body, [{ status: 'pending', count: 2, sum_total: 0 }])
    t.not(changed.headers.get('etag'), sent, 'under a new tag')
    t.equal((await alice.api.get(url, { 'if-none-match': changed.headers.get('etag')! })).status, 304)
    t.equal((await alice.api.get(url, { 'if-match': changed.headers.get('etag')! })).status, 200, 'If-Match with the current tag: the answer')
    const stale = await alice.api.get(url, { 'if-match': sent })
    t.equal(stale.status, 412, 'If-Match with a tag of before the change: 412')
    t.equal(stale.body.error.code, 'PRECONDITION_FAILED')
  }),
)

t.test('the route: a static path beside the items, only where declared; other methods 405', (t) =>
  eachDatabase(t, async (t, api) => {
    const product = (await api.admin.post(`${V1}/products`, productBody())).body
    t.equal((await api.anonymous.get(`${V1}/products/${product.id}`)).status, 200, 'an item is still read by its id')
    const options = await api.anonymous.request('OPTIONS', `${V1}/products/aggregates`)
    t.equal(options.status, 204)
    t.equal(options.headers.get('allow'), 'GET, HEAD, OPTIONS')
    const users = await api.admin.get(`${V1}/users/aggregates`)
    t.equal(users.status, 404, 'users declare no aggregates: the path names no item')
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      for (const path of ['/products/aggregates', '/orders/aggregates', `/products/${product.id}/reviews/aggregates`]) {
        const refused = await api.admin.request(method, `${V1}${path}`, { body: method === 'DELETE' ? undefined : {} })
        t.equal(refused.status, 405, `${method} ${path}: not taken for an item`)
        t.equal(refused.body.error.code, 'METHOD_NOT_ALLOWED')
        t.equal(refused.headers.get('allow'), 'GET, HEAD, OPTIONS')
      }
    }
    t.equal((await api.admin.delete(`${V1}/products/${product.id}`)).status, 204, 'the item routes still serve items')
  }),
)

t.test('a declaration that cannot be served fails at startup, naming the problem', async (t) => {
  const { name, model, schemas, access, computed } = products.options
  const base = { name, model: model as 'product', schemas, access, computed }
  const declare = (aggregates: object) => () => defineCollection({ ...base, aggregates: aggregates as never })
  t.throws(declare({ groupBy: ['colour'], metrics: {} }), /aggregates: group_by field "colour" is not in the item schema/)
  t.throws(declare({ groupBy: ['tags'], metrics: {} }), /cannot group by "tags", a string\[\] field/)
  t.throws(declare({ groupBy: [], metrics: { rating_average: ['avg'] } }), /metric field "rating_average" is computed, not stored/)
  t.throws(declare({ groupBy: [], metrics: { name: ['sum'] } }), /sum cannot take "name", a string field; sum takes integer, number fields/)
  t.throws(declare({ groupBy: [], metrics: { status: ['max'] } }), /max cannot take "status", an enum field/)
  t.throws(declare({ groupBy: [], metrics: { price: ['median'] } }), /"median" is not a function; use sum, avg, min or max/)
  // No column of the shop is named as a metric; a field that were would be refused.
  const count: Field = { ...products.field.get('stock')!, name: 'count' }
  t.throws(() => aggregateSpec('bad', { groupBy: ['count'], metrics: {} }, new Map([['count', count]])), /group_by field "count" has a metric's name/)
  t.ok(declare({ groupBy: ['status', 'created_at'], metrics: { price: ['sum', 'avg', 'min', 'max'], created_at: ['min', 'max'], name: ['min'] } })().aggregates, 'what fits is served')
})

t.test('an aggregate past STATEMENT_TIMEOUT_MS answers what a list does: 503 with Retry-After', { skip: !databaseKinds().includes('postgres') && 'no PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres', undefined, { statementTimeoutMs: LOCK_WAIT_TIMEOUT_MS })
  await api.admin.post(`${V1}/orders`, {})
  const locker = new pg.Client({ connectionString: (api.databaseConfig as { url: string }).url })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('BEGIN')
  // The aggregate's statement waits for the lock past its time limit, and is cancelled.
  await locker.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE')
  const list = await api.admin.get(`${V1}/orders`)
  const aggregate = await api.admin.get(`${V1}/orders/aggregates?group_by=status&metrics=count,sum:total`)
  for (const [what, answer] of [['the list', list], ['the aggregate', aggregate]] as const) {
    t.equal(answer.status, 503, `${what}: 503`)
    t.equal(answer.body.error.code, 'SERVICE_UNAVAILABLE', what)
    t.match(answer.headers.get('retry-after'), /^\d+$/, `${what}: Retry-After`)
  }
  await locker.query('ROLLBACK')
  t.same((await api.admin.get(`${V1}/orders/aggregates?metrics=count`)).body, [{ count: 1 }], 'and then answers again')
})

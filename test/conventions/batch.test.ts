// POST /api/v{n}/batch (DESIGN "Writing many"): operations as the caller could make them alone,
// atomic by default, with references to earlier results; no way around any rule.
import t from 'tap'
import { eachDatabase, startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'
import { eventsAfter, lastEvent } from '../helpers/feed.js'

const NO_ORDER = '01890000-0000-7000-8000-000000000000'

/** An active product to order. */
const activeProduct = async (api: Api, overrides: Record<string, unknown> = {}) => (await api.admin.post(`${V1}/products`, productBody({ status: 'active', price: 5, ...overrides }))).body

t.test('a batch runs its operations in order, each answered by its route; later ones use earlier results', (t) =>
  eachDatabase(t, async (t, api) => {
    const product = await activeProduct(api)
    const customer = await api.newUser()
    const before = await lastEvent(api)
    const batch = await customer.api.post(`${V1}/batch`, {
      operations: [
        { method: 'POST', path: '/orders', body: { note: 'Gift' } },
        { method: 'POST', path: '/orders/{$0.id}/items', body: { product_id: product.id, quantity: 2 } },
        { method: 'POST', path: '/orders/{$0.id}/items?fields=quantity', body: { product_id: '{$1.product_id}', quantity: '{$1.quantity}' } },
        { method: 'GET', path: '/orders/{$0.id}?include=items' },
      ],
    })
    t.equal(batch.status, 200)
    const [order, item, second, read] = batch.body.results
    t.same(batch.body.results.map((result: { status: number }) => result.status), [201, 201, 201, 200])
    t.equal(order.headers.location, `${V1}/orders/${order.body.id}`)
    t.ok(order.headers.etag)
    t.match(order.body, { user_id: customer.id, note: 'Gift', status: 'pending' })
    t.match(item.body, { order_id: order.body.id, product_id: product.id, quantity: 2, unit_price: 5 })
    t.same(second.body, { id: second.body.id, quantity: 2 }, 'a whole-string reference keeps its type: quantity is a number')
    t.equal(read.body.total, 20, 'a read in the batch sees the batch\'s writes')
    t.equal(read.body.items.length, 2)
    t.same((await customer.api.get(`${V1}/orders/${order.body.id}`)).body.total, 20, 'committed')
    t.same((await eventsAfter(api, before)).map((line) => line.split(' ')[0]), ['orders.created', 'order_items.created', 'orders.updated', 'order_items.created', 'orders.updated'], "every operation's events, as alone")
  }),
)

t.test('atomic: the first failure undoes every operation; its status and body are the answer, under operations[i]', (t) =>
  eachDatabase(t, async (t, api) => {
    const product = await activeProduct(api)
    const customer = await api.newUser()
    const before = await lastEvent(api)
    const invalid = await customer.api.post(`${V1}/batch`, {
      operations: [
        { method: 'POST', path: '/orders', body: {} },
        { method: 'POST', path: '/orders/{$0.id}/items', body: { product_id: product.id, quantity: 1 } },
        { method: 'POST', path: '/orders/{$0.id}/items', body: { product_id: product.id, quantity: 0 } },
      ],
    })
    t.equal(invalid.status, 422)
    t.same(invalid.body.error, {
      code: 'VALIDATION_ERROR',
      message: 'operations[2]: The request body is not valid.',
      details: [{ field: 'operations[2].quantity', reason: 'must be >= 1' }],
    })
    const missing = await customer.api.post(`${V1}/batch`, { operations: [{ method: 'POST', path: '/orders', body: {} }, { method: 'DELETE', path: `/orders/${NO_ORDER}` }] })
    t.equal(missing.status, 404)
    t.same(missing.body.error.details, [{ field: 'operations[1]', reason: 'The resource does not exist.' }], 'an error without details names the operation')
    const taken = await api.admin.post(`${V1}/batch`, { operations: [{ method: 'POST', path: '/products', body: productBody({ sku: 'SAME-1' }) }, { method: 'POST', path: '/products', body: productBody({ sku: 'SAME-1' }) }] })
    t.equal(taken.status, 409, 'a unique value taken by an earlier operation')
    t.same(taken.body.error.details, [{ field: 'operations[1].sku', reason: 'is already taken' }])
    t.equal((await customer.api.get(`${V1}/orders`)).body.length, 0, 'no order is left behind')
    t.equal((await api.admin.get(`${V1}/products?sku=SAME-1`)).body.length, 0)
    t.same((await eventsAfter(api, before)).map((line) => line.split(' ')[0]), [], 'and no event')
  }),
)

t.test('"atomic": false: each operation in its own transaction, every result answered; one that refers to a failure is 424', (t) =>
  eachDatabase(t, async (t, api) => {
    const batch = await api.admin.post(`${V1}/batch`, {
      atomic: false,
      operations: [
        { method: 'POST', path: '/products', body: productBody({ sku: 'KEPT-1' }) },
        { method: 'POST', path: '/products', body: productBody({ price: -1 }) },
        { method: 'PATCH', path: '/products/{$1.id}', body: { stock: 1 } },
        { method: 'PATCH', path: '/products/{$0.id}', body: { stock: 3 } },
      ],
    })
    t.equal(batch.status, 200)
    t.same(batch.body.results.map((result: { status: number }) => result.status), [201, 422, 424, 200])
    t.equal(batch.body.results[1].body.error.code, 'VALIDATION_ERROR')
    t.same(batch.body.results[2].body.error, { code: 'FAILED_DEPENDENCY', message: 'It refers to operation 1, which failed.', details: [{ field: 'path', reason: 'refers to operation 1, which failed' }] }, "an operation's own error, as its route's are")
    const products = (await api.admin.get(`${V1}/products?fields=sku,stock`)).body
    t.same(products.map((product: { sku: string; stock: number }) => `${product.sku} ${product.stock}`), ['KEPT-1 3'], 'what succeeded stays')
  }),
)

t.test('a batch is no way around anything: its paths, its headers, the caller\'s rules', (t) =>
  eachDatabase(t, async (t, api) => {
    const customer = await api.newUser()
    const other = await api.newUser()
    const theirs = await other.api.post(`${V1}/orders`, {})
    const refused = async (operation: object, status: number, field?: string) => {
      const res = await customer.api.post(`${V1}/batch`, { operations: [{ method: 'POST', path: '/orders', body: {} }, operation] })
      t.equal(res.status, status, JSON.stringify(operation))
      if (field) t.equal(res.body.error.details[0].field, field)
      return res
    }
    await refused({ method: 'POST', path: '/batch', body: { operations: [] } }, 400, 'operations[1].path')
    await refused({ method: 'POST', path: '/batch/', body: {} }, 400, 'operations[1].path')
    await refused({ method: 'GET', path: '/../../livez' }, 400, 'operations[1].path')
    await refused({ method: 'GET', path: '/%2e%2e/v1/products' }, 400, 'operations[1].path')
    await refused({ method: 'GET', path: 'products' }, 400, 'operations[1].path')
    await refused({ method: 'GET', path: '//evil.example/x' }, 400, 'operations[1].path')
    await refused({ method: 'GET', path: '/products', headers: { Authorization: "Bearer rf_token_someone_else" } }, 400, 'operations[1].headers.Authorization')
    await refused({ method: 'GET', path: '/products', headers: { cookie: 'session=x' } }, 400, 'operations[1].headers.cookie')
    await refused({ method: 'GET', path: '/products', headers: { 'x-forwarded-for': '10.0.0.1' } }, 400, 'operations[1].headers.x-forwarded-for')
    await refused({ method: 'GET', path: '/orders/{$1.id}' }, 400, 'operations[1].path')
    await refused({ method: 'GET', path: '/orders', body: { x: '{$5.id}' } }, 400, 'operations[1].body.x')
    await refused({ method: 'TRACE', path: '/products' }, 422, 'operations[1].method')
    // The caller's rules, as alone: the same status.
    const asAlone = async (method: string, path: string, body?: unknown) => {
      const alone = await customer.api.request(method, `${V1}${path}`, { body })
      t.ok(alone.status >= 400, `${method} ${path} alone: ${alone.status}`)
      const inBatch = await refused({ method, path, body }, alone.status, 'operations[1]')
      t.same(inBatch.body.error.code, alone.body.error.code)
    }
    await asAlone('POST', '/products', productBody())
    await asAlone('GET', `/orders/${theirs.body.id}`)
    await asAlone('DELETE', `/orders/${theirs.body.id}`)
    await asAlone('PATCH', `/orders/${theirs.body.id}`, { note: 'mine now' })
    const missing = await refused({ method: 'GET', path: '/orders/{$0.nothing}' }, 422, 'operations[1].path')
    t.match(missing.body.error.message, /names nothing in operation 0's answer/)
    t.equal((await customer.api.get(`${V1}/orders`)).body.length, 0, 'nothing of any refused batch stayed')
    t.equal((await api.anonymous.post(`${V1}/batch`, { operations: [{ method: 'GET', path: '/products' }] })).status, 401, 'a batch needs a caller')
    const readOnly = await api.newUser()
    const token = await readOnly.api.post(`${V1}/tokens`, { name: 'read', scopes: ['read'] })
    t.equal((await api.as({ authorization: `Bearer ${token.body.token}` }).post(`${V1}/batch`, { operations: [{ method: 'GET', path: '/products' }] })).status, 403, 'nor with a read-only token')
    const versioned = await customer.api.post('/api/v2/batch', { operations: [{ method: 'POST', path: '/orders', body: {} }] })
    t.equal(versioned.body.results[0].headers.location.startsWith('/api/v2/orders/'), true, "an operation's path is below the batch's version")
  }),
)

t.test('the caps: BATCH_MAX_OPERATIONS (413), at least one operation; an Idempotency-Key covers the batch', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { limits: { ...testConfig().limits, batchMaxOperations: 3 } } })
  const customer = await api.newUser()
  const order = { method: 'POST', path: '/orders', body: {} }
  const tooMany = await customer.api.post(`${V1}/batch`, { operations: [order, order, order, order] })
  t.equal(tooMany.status, 413)
  t.match(tooMany.body.error.message, /at most 3 operations; this one has 4/)
  t.equal((await customer.api.post(`${V1}/batch`, { operations: [] })).status, 422)
  t.equal((await customer.api.post(`${V1}/batch`, { operations: [order, order, order] })).status, 200)
  const key = { 'idempotency-key': 'batch-1' }
  const keyed = { operations: [order, { method: 'GET', path: '/orders/{$0.id}' }] }
  const first = await customer.api.post(`${V1}/batch`, keyed, key)
  t.equal(first.status, 200)
  const again = await customer.api.post(`${V1}/batch`, keyed, key)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.same(again.body, first.body)
  t.equal((await customer.api.get(`${V1}/orders`)).body.length, 4, 'the replay wrote nothing')
  const other = await customer.api.post(`${V1}/batch`, { operations: [order] }, key)
  t.equal(other.status, 422, 'the same key for another batch')
  // An operation's own key is an operation's: a second batch with it gets its first answer.
  const inner = { method: 'POST', path: '/orders', body: { note: 'keyed' }, headers: { 'Idempotency-Key': 'order-1' } }
  const one = await customer.api.post(`${V1}/batch`, { operations: [inner] })
  const two = await customer.api.post(`${V1}/batch`, { operations: [inner] })
  t.equal(two.body.results[0].headers['idempotent-replayed'], 'true')
  t.equal(two.body.results[0].body.id, one.body.results[0].body.id)
})

t.test('each operation counts against the rate limit', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { limits: { ...testConfig().limits, rateLimit: { anonymous: 0, authenticated: 4, exempt: [] } } } })
  const customer = await api.newUser()
  const order = { method: 'POST', path: '/orders', body: {} }
  t.equal((await customer.api.post(`${V1}/batch`, { operations: [order, order] })).status, 200, 'the batch and two operations: 3 of 4')
  const limited = await customer.api.post(`${V1}/batch`, { operations: [order, order] })
  t.equal(limited.status, 429, 'the second operation is past the quota')
  t.ok(limited.headers.get('retry-after'))
  t.equal(limited.body.error.code, 'RATE_LIMITED')
  t.equal((await api.admin.get(`${V1}/orders`)).body.length, 2, 'the limited batch left nothing')
})

t.test('two batches racing on one If-Match: one wins, the other is 412 and leaves nothing', (t) =>
  eachDatabase(t, async (t, api) => {
    const product = await activeProduct(api, { stock: 10 })
    const read = await api.admin.get(`${V1}/products/${product.id}`)
    const etag = read.headers.get('etag')!
    const batch = (stock: number, sku: string) =>
      api.admin.post(`${V1}/batch`, {
        operations: [
          { method: 'POST', path: '/products', body: productBody({ sku }) },
          { method: 'PATCH', path: `/products/${product.id}`, headers: { 'If-Match': etag }, body: { stock } },
        ],
      })
    const answers = await Promise.all([batch(1, 'RACE-1'), batch(2, 'RACE-2')])
    t.same(answers.map((answer) => answer.status).sort(), [200, 412])
    const winner = answers.find((answer) => answer.status === 200)!
    const stock = (await api.admin.get(`${V1}/products/${product.id}`)).body.stock
    t.equal(stock, winner.body.results[1].body.stock, "the winner's change stands")
    t.equal((await api.admin.get(`${V1}/products?sku[in]=RACE-1,RACE-2`)).body.length, 1, "the loser's create is undone")
  }),
)

t.test('consecutive creates in one collection answer as each would alone, and fail as the first failing one would', (t) =>
  eachDatabase(t, async (t, api) => {
    const before = await lastEvent(api)
    const creates = [productBody({ sku: 'ONE-1' }), productBody({ sku: 'ONE-2' }), productBody({ sku: 'ONE-3' })].map((body) => ({ method: 'POST', path: '/products', body }))
    const batch = await api.admin.post(`${V1}/batch`, { operations: [...creates, { method: 'GET', path: '/products?sku=ONE-2' }] })
    t.equal(batch.status, 200)
    const [first, second, third, listed] = batch.body.results
    for (const [i, result] of [first, second, third].entries()) {
      t.equal(result.status, 201)
      t.equal(result.body.sku, `ONE-${i + 1}`, 'in order')
      t.equal(result.headers.location, `${V1}/products/${result.body.id}`)
      const read = await api.admin.get(result.headers.location)
      t.equal(result.headers.etag, read.headers.get('etag'), "the item's ETag, as its create alone answers it")
      t.equal(result.headers['last-modified'], read.headers.get('last-modified'))
      t.same(result.body, read.body)
    }
    t.equal(listed.body[0].id, second.body.id)
    t.same((await eventsAfter(api, before)).map((line) => line.split(' ')[0]), ['products.created', 'products.created', 'products.created'], 'one event each')
    const failing = await api.admin.post(`${V1}/batch`, {
      operations: [
        { method: 'POST', path: '/products', body: productBody({ sku: 'TWO-1' }) },
        { method: 'POST', path: '/products', body: productBody({ sku: 'TWO-2', price: -1 }) },
        { method: 'POST', path: '/products', body: productBody({ sku: 'TWO-3', stock: -1 }) },
      ],
    })
    t.equal(failing.status, 422)
    t.same(failing.body.error.details, [{ field: 'operations[1].price', reason: 'must be >= 0' }], 'only the first failing operation, as when they run one by one')
    t.equal(failing.body.error.message, 'operations[1]: The request body is not valid.')
    t.same((await api.admin.get(`${V1}/products?sku[in]=TWO-1,TWO-2,TWO-3`)).body, [], 'and nothing stays')
    const tokens = await api.admin.post(`${V1}/batch`, { operations: [{ method: 'POST', path: '/tokens', body: { name: 'one' } }, { method: 'POST', path: '/tokens', body: { name: 'two' } }] })
    t.same(tokens.body.results.map((result: { status: number }) => result.status), [201, 201], 'a route that is no collection takes its creates one by one')
  }),
)

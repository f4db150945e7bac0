// A database that cannot serve: refused connections, a full pool, a statement or a request past
// its time limit are 503 with Retry-After on every path, and the service recovers without a
// restart (DESIGN "Limits and faults"; ERR-08, LIM-08). PostgreSQL only: PGlite is in-process.
import diagnostics from 'node:diagnostics_channel'
import pg from 'pg'
import t, { type Test } from 'tap'
import type { Config } from '../../src/config.js'
import { LOCK_WAIT_TIMEOUT_MS, startApi, V1, type Api, type Response } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const postgres = databaseKinds().includes('postgres')

function assertUnavailable(t: Test, res: Response<any>, what: string) {
  t.equal(res.status, 503, `${what}: 503`)
  t.equal(res.body?.error?.code, 'SERVICE_UNAVAILABLE', `${what}: SERVICE_UNAVAILABLE`)
  t.same(res.body?.error?.details, [], `${what}: the uniform body`)
  t.match(res.headers.get('retry-after'), /^\d+$/, `${what}: Retry-After`)
  t.equal(res.headers.get('x-content-type-options'), 'nosniff', `${what}: the security headers`)
}

/** A connection of the test's own: to the server (to refuse the service's database), or to the database (to lock it). */
async function connection(t: Test, url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  t.teardown(() => client.end())
  return client
}

/** The error a route's handler ends with, once it has (Fastify's diagnostics channel). */
function handlerSettled(method: string, url: RegExp): Promise<{ code?: string }> {
  const channel = diagnostics.tracingChannel('fastify.request.handler')
  return new Promise((resolve) => {
    const subscribers = {
      start() {}, end() {}, asyncStart() {}, asyncEnd() {},
      error(store: { route: { url: string; method: string }; error: { code?: string } }) {
        if (store.route.method !== method || !url.test(store.route.url)) return
        channel.unsubscribe(subscribers as never)
        resolve(store.error)
      },
    }
    channel.subscribe(subscribers as never)
  })
}

const serverUrl = () => process.env.TEST_DATABASE_URL!
const databaseUrl = (api: Api) => (api.databaseConfig as { url: string }).url

/**
 * Resolves once `count` of the service's statements wait on a lock. `client` must not be in a
 * transaction: there, pg_stat_activity is one snapshot for the whole transaction.
 */
async function waiting(client: pg.Client, count: number): Promise<void> {
  for (;;) {
    const { rows } = await client.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
    )
    if (rows[0].n >= count) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('a database that refuses connections: 503 with Retry-After on every path, then recovery without a restart', { skip: !postgres && 'no PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres')
  const product = (await api.admin.post(`${V1}/products`, productBody())).body
  const password = 'a customer password'
  t.equal((await api.anonymous.post(`${V1}/users`, { email: 'cy@shop.test', name: 'Cy', password })).status, 201)
  const signedIn = await api.anonymous.post(`${V1}/sessions`, { email: 'cy@shop.test', password })
  const cookie = signedIn.headers.get('set-cookie')!.split(';', 1)[0]!
  const server = await connection(t, serverUrl())
  const name = (await api.db.query<{ name: string }>('SELECT current_database() AS name', []))[0]!.name

  await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`)
  await server.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name])
  const item = `${V1}/products/${product.id}`
  const requests: [string, () => Promise<Response<any>>][] = [
    ['a list (Prisma)', () => api.anonymous.get(`${V1}/products?name[contains]=a`)],
    ['an item (by hand)', () => api.anonymous.get(item)],
    ['a bearer token lookup', () => api.admin.get(`${V1}/tokens`)],
    ['a write with a token', () => api.admin.patch(item, { price: 2 })],
    ['a session lookup', () => api.as({ cookie }).get(`${V1}/sessions/current`)],
    ['a sign-in', () => api.anonymous.post(`${V1}/sessions`, { email: 'cy@shop.test', password })],
    ['a registration (Prisma create)', () => api.anonymous.post(`${V1}/users`, { email: 'dee@shop.test', name: 'Dee', password })],
    ['a nested list', () => api.anonymous.get(`${item}/reviews`)],
  ]
  for (const [what, send] of requests) assertUnavailable(t, await send(), what)
  const cutOff = await api.anonymous.get('/readyz')
  t.equal(cutOff.status, 503, 'not ready while cut off')
  t.equal(cutOff.body.checks['database:connection'][0].status, 'fail')
  t.equal((await api.anonymous.get('/livez')).status, 200, 'but live: a restart would not help')
  for (const [what, send] of requests.slice(0, 2)) assertUnavailable(t, await send(), `${what}, again`)

  await server.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS true`)
  t.equal((await api.anonymous.get('/readyz')).status, 200, 'back: ready')
  t.equal((await api.anonymous.get(item)).status, 200, 'back: an item')
  t.equal((await api.anonymous.get(`${V1}/products`)).status, 200, 'back: a list')
  t.equal((await api.admin.patch(item, { price: 2 })).status, 200, 'back: a write')
  t.equal((await api.as({ cookie }).get(`${V1}/sessions/current`)).status, 200, 'back: the session still works')
})

t.test('a statement past STATEMENT_TIMEOUT_MS is cancelled: 503, nothing written, the connection usable', { skip: !postgres && 'no PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres', undefined, { statementTimeoutMs: LOCK_WAIT_TIMEOUT_MS })
  const product = (await api.admin.post(`${V1}/products`, productBody())).body
  const item = `${V1}/products/${product.id}`
  const locker = await connection(t, databaseUrl(api))
  await locker.query('BEGIN')
  await locker.query('SELECT 1 FROM products WHERE id = $1 FOR UPDATE', [product.id])
  assertUnavailable(t, await api.admin.patch(item, { name: 'changed' }), 'an update waiting on a row lock')
  assertUnavailable(t, await api.admin.delete(item), 'a delete waiting on a row lock')
  await locker.query('LOCK TABLE products IN ACCESS EXCLUSIVE MODE')
  assertUnavailable(t, await api.anonymous.get(`${V1}/products`), 'a list waiting on a table lock')
  await locker.query('ROLLBACK')
  const read = await api.admin.get(item)
  t.equal(read.status, 200, 'the same connections serve again')
  t.equal(read.body.name, product.name, 'the cancelled update wrote nothing')
})

t.test('a full pool that frees no connection within 2 s: 503; the requests holding it finish', { skip: !postgres && 'no PostgreSQL' }, async (t) => {
  const api = await startApi(t, 'postgres', undefined, { statementTimeoutMs: 60_000, config: { limits: { requestTimeoutMs: 60_000, shutdownGraceMs: 0, rateLimit: { anonymous: 0, authenticated: 0, exempt: [] }, bulkMaxItems: 1000, batchMaxOperations: 100 } } as Partial<Config> })
  await api.admin.post(`${V1}/products`, productBody())
  const locker = await connection(t, databaseUrl(api))
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE products IN ACCESS EXCLUSIVE MODE')
  // Every connection of the pool (10) waits on the lock.
  const holding = Array.from({ length: 10 }, () => api.anonymous.get(`${V1}/products/01890000-0000-7000-8000-000000000000`))
  await waiting(await connection(t, databaseUrl(api)), 10)
  assertUnavailable(t, await api.anonymous.get(`${V1}/products/01890000-0000-7000-8000-000000000001`), 'a request with no connection to be had')
  await locker.query('COMMIT')
  t.same((await Promise.all(holding)).map((res) => res.status), Array(10).fill(404), 'the waiting requests were answered')
})

t.test('a request past REQUEST_TIMEOUT_MS: 503 with Retry-After, and no write starts after it', { skip: !postgres && 'no PostgreSQL' }, async (t) => {
  const limits = { requestTimeoutMs: 300, shutdownGraceMs: 0, rateLimit: { anonymous: 0, authenticated: 0, exempt: [] }, bulkMaxItems: 1000, batchMaxOperations: 100 }
  const api = await startApi(t, 'postgres', undefined, { statementTimeoutMs: 60_000, config: { limits } })
  await api.admin.post(`${V1}/products`, productBody())
  const locker = await connection(t, databaseUrl(api))
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE products IN ACCESS EXCLUSIVE MODE')
  const late = await api.anonymous.get(`${V1}/products`, {})
  assertUnavailable(t, late, 'a list waiting on a lock')
  t.equal(late.body.error.message, 'The request could not be answered in time; try again later.')
  await locker.query('COMMIT')

  // An item for an order: the order is read (and waits on a lock) before the insert would start.
  const product = (await api.admin.post(`${V1}/products`, productBody({ status: 'active' }))).body
  const order = (await api.admin.post(`${V1}/orders`, {})).body
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE')
  const settled = handlerSettled('POST', /\/items$/)
  assertUnavailable(t, await api.admin.post(`${V1}/orders/${order.id}/items`, { product_id: product.id, quantity: 1 }), 'an item create waiting on a lock')
  await locker.query('COMMIT')
  // The handler goes on once the lock is gone, and its transaction does not commit.
  t.match(await settled, { code: 'SERVICE_UNAVAILABLE', message: /before its write could complete/ }, 'the handler stopped short of its commit')
  t.same((await api.admin.get(`${V1}/orders/${order.id}/items`)).body, [], 'nothing was written after the 503')
  t.same((await api.admin.get(`${V1}/events?type=order_items.*`)).body, [], 'and no event recorded')

  // A write in one statement has no COMMIT of its own to hold back: the statement checks the time
  // left once it has its row, after the wait for the lock, and fails rather than commit late.
  const before = (await api.admin.get(`${V1}/events`)).body.length
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE products IN ACCESS EXCLUSIVE MODE')
  const patched = handlerSettled('PATCH', /\/products\/:id$/)
  assertUnavailable(t, await api.admin.patch(`${V1}/products/${product.id}`, { stock: 999 }), 'a one-statement change waiting on a lock')
  const posted = handlerSettled('POST', /\/products$/)
  assertUnavailable(t, await api.admin.post(`${V1}/products`, productBody({ sku: 'LATE-001' })), 'a one-statement create waiting on a lock')
  await locker.query('COMMIT')
  t.match(await patched, { code: 'SERVICE_UNAVAILABLE' }, 'the change failed once its lock came')
  t.match(await posted, { code: 'SERVICE_UNAVAILABLE' }, 'and so did the create')
  t.equal((await api.admin.get(`${V1}/products/${product.id}`)).body.stock, product.stock, 'nothing was changed after the 503')
  t.same((await api.admin.get(`${V1}/products?sku=LATE-001`)).body, [], 'nor created')
  t.equal((await api.admin.get(`${V1}/events`)).body.length, before, 'and no event recorded')
})

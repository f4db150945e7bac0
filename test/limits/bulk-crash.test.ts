// kill -9 during a large array POST leaves nothing half-written after a restart (DESIGN "Writing
// many": all of an array, or none). PostgreSQL only: the test's own connection holds a lock that
// the write needs, so the service is killed while its write is provably inside the database,
// waiting; no sleep stands in for "the write has probably started".
import pg from 'pg'
import t, { type Test } from 'tap'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { adminCookie, sendJson, started, type Running } from '../helpers/service-process.js'
import { until } from '../helpers/until.js'

const postgres = databaseKinds().includes('postgres')
const V1 = '/api/v1'

// Each test starts the service twice as a process (tsx, migrations): about 10 s apiece alone,
// more beside other files.
t.setTimeout(240_000)

/**
 * The request's and the statement's time limits far beyond the test: the write must still be
 * able to commit when the lock is released, so that only the crash can be what undoes it (with
 * the defaults, a write released after 10 s would fail its time check and prove nothing).
 */
const UNLIMITED = { STATEMENT_TIMEOUT_MS: '600000', REQUEST_TIMEOUT_MS: '600000' }

async function database(t: Test): Promise<string> {
  const created = await createTestDatabase('postgres')
  t.teardown(() => created.drop())
  return (created.config as { url: string }).url
}

async function client(t: Test, url: string): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url })
  await connection.connect()
  t.teardown(() => connection.end())
  return connection
}

/**
 * The pid of the service's backend whose statement (its text starting with `statement`) waits
 * on a lock that `locker` holds. `watcher` must not be in a transaction: there, pg_stat_activity
 * is one snapshot for the whole transaction. Bounded: 1,000 polls, 20 ms apart.
 */
function waitingOn(watcher: pg.Client, locker: pg.Client, statement: string): Promise<number> {
  const lockerPid = (locker as unknown as { processID: number }).processID
  return until(
    `a statement starting "${statement}" to wait on the test's lock`,
    async () => {
      const { rows } = await watcher.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND starts_with(ltrim(query), $1) AND $2 = ANY(pg_blocking_pids(pid))`,
        [statement, lockerPid],
      )
      return rows[0]?.pid
    },
    { everyMs: 20, tries: 1_000 },
  )
}

/**
 * Resolves once the backend `pid` has ended. Its client is dead, but the backend only finds out
 * when it next talks to it: after the lock is released. Until it has ended, whatever it was
 * doing could still commit, so nothing is asserted before. Bounded: 1,000 polls, 20 ms apart.
 */
function ended(watcher: pg.Client, pid: number): Promise<true> {
  return until(
    `the killed service's backend ${pid} to end`,
    async () => ((await watcher.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 0 ? true : undefined),
    { everyMs: 20, tries: 1_000 },
  )
}

/** SIGKILL, and the request in flight gets no answer: its connection dies with the process. */
async function killDuringRequest(t: Test, service: Running, request: Promise<Response>): Promise<void> {
  // Handled before the kill: the request fails as the process dies, whatever the test awaits then.
  const outcome = request.then(
    (res) => `answered ${res.status}`,
    () => 'no answer',
  )
  service.child.kill('SIGKILL')
  const { code } = await service.exited
  t.equal(code, null, 'the service died of the signal, not by exiting')
  t.equal(await outcome, 'no answer', 'the request in flight was never answered')
}

const count = async (db: pg.Client, sql: string, values: unknown[] = []) => (await db.query<{ n: number }>(sql, values)).rows[0]!.n

t.test('kill -9 while one statement writes an array of 1,000 products: after a restart, none of them and none of their events', { skip: !postgres && 'needs PostgreSQL' }, async (t) => {
  const url = await database(t)
  const env = { DATABASE_URL: url, ...UNLIMITED }
  const service = await started(t, env)
  const cookie = await adminCookie(service.origin)
  const db = await client(t, url)
  const bodies = Array.from({ length: 1_000 }, (_, i) => productBody({ sku: `CRASH-${String(i).padStart(4, '0')}` }))
  const skus = bodies.map((body) => body.sku)

  // SHARE ROW EXCLUSIVE conflicts with the ROW EXCLUSIVE an INSERT takes, and not with the reads
  // that come before it: the array's one statement is sent, and waits inside the database.
  const locker = await client(t, url)
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE products IN SHARE ROW EXCLUSIVE MODE')
  const request = sendJson('POST', `${service.origin}${V1}/products`, bodies, { cookie })
  const backend = await waitingOn(db, locker, 'WITH w AS (INSERT INTO "products"')
  t.pass("the array's single INSERT waits on the lock")

  await killDuringRequest(t, service, request)
  // Released, the orphaned statement runs on: it inserts the 1,000 rows and their events, then
  // fails sending them back to the dead client, before it reads the Sync that would commit it.
  // (An array whose answer fits PostgreSQL's output buffer is committed whole instead: all, not
  // half; a run with 3 items showed it. Either way, never a part.)
  await locker.query('COMMIT')
  await ended(db, backend)

  const restarted = await started(t, env)
  t.equal(await count(db, 'SELECT count(*)::int AS n FROM products WHERE sku = ANY($1)', [skus]), 0, 'none of the products is stored')
  t.equal(await count(db, `SELECT count(*)::int AS n FROM events WHERE type = 'products.created'`), 0, 'and no products.created event')
  const admin = { cookie: await adminCookie(restarted.origin) }
  const listed = await fetch(`${restarted.origin}${V1}/products?size=1`, { headers: admin })
  t.equal(listed.status, 200, 'the restarted service answers a list')
  t.equal(listed.headers.get('x-total-count'), '0', 'the API lists no product')

  // The service answers as ever: the same array, sent again, is created whole.
  const again = await sendJson('POST', `${restarted.origin}${V1}/products`, bodies, admin)
  t.equal(again.status, 201, 'the same array is created after the restart')
  const created = (await again.json()) as { id: string; sku: string }[]
  t.same(created.map((item) => item.sku), skus, 'every item, in the order sent')
  t.equal(await count(db, 'SELECT count(*)::int AS n FROM products WHERE sku = ANY($1)', [skus]), 1_000, 'all 1,000 stored')
  const { rows: events } = await db.query<{ item_id: string }>(`SELECT item_id::text FROM events WHERE type = 'products.created' ORDER BY id`)
  t.same(events.map((event) => event.item_id), created.map((item) => item.id), 'one products.created event each, in order')
})

t.test('kill -9 while a transaction writes order items one by one: after a restart, the order has no items, no item events, and a total of 0', { skip: !postgres && 'needs PostgreSQL' }, async (t) => {
  const url = await database(t)
  const env = { DATABASE_URL: url, ...UNLIMITED }
  const service = await started(t, env)
  const admin = { cookie: await adminCookie(service.origin) }
  const db = await client(t, url)
  const product = async (price: number) => {
    const res = await sendJson('POST', `${service.origin}${V1}/products`, productBody({ price, status: 'active' }), admin)
    t.equal(res.status, 201, `a product at ${price} is created`)
    return ((await res.json()) as { id: string }).id
  }
  const [a, b] = [await product(10), await product(25)]
  const customer = { email: 'buyer@shop.test', name: 'Buyer', password: 'a long buyer password' }
  t.equal((await sendJson('POST', `${service.origin}${V1}/users`, customer)).status, 201, 'a customer signs up')
  const signedIn = await sendJson('POST', `${service.origin}${V1}/sessions`, { email: customer.email, password: customer.password })
  const buyer = { cookie: signedIn.headers.get('set-cookie')!.split(';', 1)[0]! }
  const ordered = await sendJson('POST', `${service.origin}${V1}/orders`, {}, buyer)
  t.equal(ordered.status, 201, 'and opens an order')
  const order = ((await ordered.json()) as { id: string }).id
  const orderEvents = `SELECT count(*)::int AS n FROM events WHERE collection <> 'products'`
  const before = await count(db, orderEvents)

  // productForSale reads B without a lock, so a lock on B's row does not stop the hook; the item's
  // INSERT does: its foreign key takes FOR KEY SHARE on B, which FOR UPDATE blocks. The items are
  // written in order in one transaction, so A's item (and the order's new total, a trigger's) is
  // written, uncommitted, when B's waits.
  const locker = await client(t, url)
  await locker.query('BEGIN')
  await locker.query('SELECT id FROM products WHERE id = $1 FOR UPDATE', [b])
  const items = [{ product_id: a, quantity: 2 }, { product_id: b, quantity: 1 }, ...Array.from({ length: 98 }, (_, i) => ({ product_id: i % 2 ? b : a, quantity: 1 }))]
  const request = sendJson('POST', `${service.origin}${V1}/orders/${order}/items`, items, buyer)
  const backend = await waitingOn(db, locker, 'INSERT INTO "order_items"')
  t.pass("B's item waits on the lock, after A's was written")

  await killDuringRequest(t, service, request)
  // Released, the orphaned transaction's INSERT goes through; it is rolled back when its backend
  // finds the client gone (it never sent COMMIT).
  await locker.query('COMMIT')
  await ended(db, backend)

  const restarted = await started(t, env)
  t.equal(await count(db, 'SELECT count(*)::int AS n FROM order_items WHERE order_id = $1', [order]), 0, 'the order has no items')
  t.equal(await count(db, `SELECT count(*)::int AS n FROM events WHERE type = 'order_items.created'`), 0, 'and no order_items.created event')
  t.equal(await count(db, orderEvents), before, 'nor any other event of the order or its items')
  const read = await fetch(`${restarted.origin}${V1}/orders/${order}`, { headers: buyer })
  t.equal(read.status, 200, 'the restarted service answers a read of the order')
  t.match(await read.json(), { id: order, status: 'pending', total: 0 }, "the order's total is still 0, and it is still pending")
  const listed = await fetch(`${restarted.origin}${V1}/orders/${order}/items`, { headers: buyer })
  t.equal(listed.status, 200, 'and a list of its items')
  t.same(await listed.json(), [], 'the API lists no item')

  // The service answers as ever: the same items, sent again, are created whole.
  const again = await sendJson('POST', `${restarted.origin}${V1}/orders/${order}/items`, items, buyer)
  t.equal(again.status, 201, 'the same items are created after the restart')
  const created = (await again.json()) as { id: string }[]
  t.equal(created.length, items.length, 'every item')
  const { rows: events } = await db.query<{ item_id: string }>(`SELECT item_id::text FROM events WHERE type = 'order_items.created' ORDER BY id`)
  t.same(events.map((event) => event.item_id), created.map((item) => item.id), 'one order_items.created event each, in order')
  const total = items.reduce((sum, item) => sum + (item.product_id === a ? 10 : 25) * item.quantity, 0)
  t.match(await (await fetch(`${restarted.origin}${V1}/orders/${order}`, { headers: buyer })).json(), { total }, 'and the total is their sum')
})

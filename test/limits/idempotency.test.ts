// Idempotency-Key on POST: a retry gets the first answer again and writes nothing; another payload
// is 422; in flight is 409; per caller; 24 h; on any instance (LIM-11; DESIGN "Limits and faults").
import pg from 'pg'
import t from 'tap'
import { startApi, eachDatabase, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

/** Products with this sku, as the admin lists them. */
const count = async (api: Api, sku: string) => (await api.admin.get(`${V1}/products?sku=${sku}`)).body.length

t.test('a retry with the same key and payload gets the same answer, replayed, and writes nothing', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const body = productBody()
    const key = { 'idempotency-key': '8e03978e-40d5-43e8-bc93-6894a57f9324' }
    const first = await admin.post(`${V1}/products`, body, key)
    t.equal(first.status, 201)
    t.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is not a replay')
    const again = await admin.post(`${V1}/products`, body, key)
    t.equal(again.status, 201, 'the same status')
    t.equal(again.headers.get('idempotent-replayed'), 'true')
    t.same(again.body, first.body, 'the same body: the same item')
    for (const name of ['location', 'etag', 'last-modified', 'content-type']) t.equal(again.headers.get(name), first.headers.get(name), name)
    t.ok(again.headers.get('x-request-id') !== first.headers.get('x-request-id'), 'a request of its own')
    t.equal(await count(api, body.sku as string), 1, 'one row')
    const quoted = await admin.post(`${V1}/products`, body, { 'idempotency-key': '"8e03978e-40d5-43e8-bc93-6894a57f9324"' })
    t.equal(quoted.headers.get('idempotent-replayed'), 'true', 'the draft’s quoted form is the same key')

    // An answer that was an error is replayed as well: the retry learns the same.
    const duplicate = { ...productBody(), sku: body.sku }
    const taken = await admin.post(`${V1}/products`, duplicate, { 'idempotency-key': 'sku-taken' })
    t.equal(taken.status, 409)
    const takenAgain = await admin.post(`${V1}/products`, duplicate, { 'idempotency-key': 'sku-taken' })
    t.equal(takenAgain.status, 409)
    t.equal(takenAgain.headers.get('idempotent-replayed'), 'true')
    t.same(takenAgain.body, taken.body)

    // The vendor media type is kept too.
    const vendor = { 'idempotency-key': 'vendor-1', accept: 'application/vnd.resourceful.v1+json' }
    const vendorBody = productBody()
    const typed = await admin.post(`${V1}/products`, vendorBody, vendor)
    t.match(typed.headers.get('content-type'), /^application\/vnd\.resourceful\.v1\+json/)
    const replayed = await admin.post(`${V1}/products`, vendorBody, vendor)
    t.equal(replayed.headers.get('idempotent-replayed'), 'true')
    t.equal(replayed.headers.get('content-type'), typed.headers.get('content-type'), 'the media type it was sent as')
  }),
)

t.test('the same key with another payload, method path or body, is 422; a malformed key is 400', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const key = { 'idempotency-key': 'order-1' }
    t.equal((await admin.post(`${V1}/products`, productBody(), key)).status, 201)
    const other = await admin.post(`${V1}/products`, productBody(), key)
    t.equal(other.status, 422)
    t.equal(other.body.error.code, 'IDEMPOTENCY_KEY_REUSED')
    t.equal((await admin.post(`${V1}/orders`, {}, key)).body.error.code, 'IDEMPOTENCY_KEY_REUSED', 'another path')
    for (const bad of ['', 'x'.repeat(256), 'with space', 'tab\there', 'é']) {
      const res = await admin.post(`${V1}/products`, productBody(), { 'idempotency-key': bad })
      t.equal(res.status, 400, JSON.stringify(bad.slice(0, 20)))
      t.same(res.body.error.details, [{ field: 'Idempotency-Key', reason: 'is not a valid key' }])
    }
    t.equal((await admin.post(`${V1}/products`, productBody(), { 'idempotency-key': 'x'.repeat(255) })).status, 201, '255 characters are fine')
  }),
)

t.test('keys are per caller: another user with the same key makes their own item', (t) =>
  eachDatabase(t, async (t, api) => {
    const [ada, bob] = [await api.newUser(), await api.newUser()]
    const key = { 'idempotency-key': 'my-order' }
    const a = await ada.api.post(`${V1}/orders`, { note: 'Ada' }, key)
    const b = await bob.api.post(`${V1}/orders`, { note: 'Ada' }, key)
    t.equal(a.status, 201)
    t.equal(b.status, 201)
    t.equal(b.headers.get('idempotent-replayed'), null, 'not a replay of someone else’s answer')
    t.not(a.body.id, b.body.id)
    t.equal((await ada.api.post(`${V1}/orders`, { note: 'Ada' }, key)).body.id, a.body.id)
  }),
)

t.test('a server-side failure gives the key back: the retry runs again', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    // A failure inside the write, after the key was taken: the insert itself fails.
    await api.db.query("CREATE FUNCTION fail_insert() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'boom'; END $$ LANGUAGE plpgsql", [])
    await api.db.query('CREATE TRIGGER fail_insert BEFORE INSERT ON products FOR EACH ROW EXECUTE FUNCTION fail_insert()', [])
    const key = { 'idempotency-key': 'flaky' }
    const body = productBody()
    t.equal((await admin.post(`${V1}/products`, body, key)).status, 500)
    t.same(await api.db.query("SELECT key FROM idempotency_keys WHERE key = 'flaky'", []), [], 'the key was given back')
    await api.db.query('DROP TRIGGER fail_insert ON products', [])
    const retry = await admin.post(`${V1}/products`, body, key)
    t.equal(retry.status, 201, 'the retry ran')
    t.equal(retry.headers.get('idempotent-replayed'), null)
  }),
)

t.test('while the first is in flight, 409; when it ends, the retry gets its answer; on another instance too', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const a = await startApi(t, 'postgres')
  const b = await startApi(t, 'postgres', undefined, { besides: a })
  const user = await a.newUser()
  const onB = b.as({ authorization: `Bearer ${user.token}` })
  const locker = new pg.Client({ connectionString: (a.databaseConfig as { url: string }).url })
  await locker.connect()
  t.teardown(() => locker.end())
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE orders IN ACCESS EXCLUSIVE MODE')
  const key = { 'idempotency-key': 'slow-order' }
  const first = user.api.post(`${V1}/orders`, { note: 'slow' }, key)
  // Its key is taken, and its insert waits on the lock.
  while ((await a.db.query("SELECT 1 FROM idempotency_keys WHERE key = 'slow-order'", [])).length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const meanwhile = await onB.post(`${V1}/orders`, { note: 'slow' }, key)
  t.equal(meanwhile.status, 409)
  t.equal(meanwhile.body.error.code, 'IDEMPOTENCY_KEY_IN_USE')
  t.equal(meanwhile.headers.get('retry-after'), '1')
  await locker.query('COMMIT')
  const done = await first
  t.equal(done.status, 201)
  const retry = await onB.post(`${V1}/orders`, { note: 'slow' }, key)
  t.equal(retry.headers.get('idempotent-replayed'), 'true', 'another instance replays it')
  t.same(retry.body, done.body)
  t.equal((await a.admin.get(`${V1}/orders`)).body.length, 1, 'one order')
})

t.test('a key left in flight by a process that died: after its lease, the same request only; what it wrote is its answer, never a second write', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const body = productBody()
    const key = { 'idempotency-key': 'crashed' }
    const first = await admin.post(`${V1}/products`, body, key)
    t.equal(first.status, 201)
    // As a process killed between its write (which recorded the item on the key) and its answer leaves it.
    await api.db.query("UPDATE idempotency_keys SET status = NULL, headers = NULL, body = NULL, locked_until = now() + interval '1 minute'", [])
    t.equal((await admin.post(`${V1}/products`, body, key)).status, 409, 'in flight while its lease runs')
    await api.db.query("UPDATE idempotency_keys SET locked_until = now() - interval '1 second'", [])
    t.equal((await admin.post(`${V1}/products`, productBody(), key)).body.error.code, 'IDEMPOTENCY_KEY_REUSED', 'another request may not take it')
    const retried = await admin.post(`${V1}/products`, body, key)
    t.equal(retried.status, 201, 'the same request is answered with what the first one wrote')
    t.equal(retried.headers.get('idempotent-replayed'), 'true')
    t.equal(retried.body.id, first.body.id)
    t.equal(retried.headers.get('location'), first.headers.get('location'))
    t.equal((await admin.get(`${V1}/products?sku=${String(body.sku)}`)).body.length, 1, 'one product')
    t.same((await admin.post(`${V1}/products`, body, key)).body, retried.body, 'and that answer is kept for the next retry')

    // In a transaction (a review: its product keeps figures of it), the item is recorded the same way.
    const review = { rating: 4, title: 'Kept', body: 'Once.' }
    const reviewKey = { 'idempotency-key': 'crashed-review' }
    const reviews = `${V1}/products/${first.body.id}/reviews`
    const written = await admin.post(reviews, review, reviewKey)
    t.equal(written.status, 201)
    await api.db.query("UPDATE idempotency_keys SET status = NULL, headers = NULL, body = NULL, locked_until = now() - interval '1 second' WHERE key = 'crashed-review'", [])
    const again = await admin.post(reviews, review, reviewKey)
    t.equal(again.status, 201)
    t.equal(again.body.id, written.body.id, 'the review it wrote')
    t.equal((await admin.get(reviews)).body.length, 1, 'one review')

    // Killed before its write: nothing was written, so the retry writes.
    const unwritten = productBody()
    const request = `POST ${V1}/products\n${JSON.stringify(unwritten)}`
    await api.db.query(
      "INSERT INTO idempotency_keys (caller, key, fingerprint, locked_until) SELECT caller, 'died-early', encode(sha256(convert_to($1, 'UTF8')), 'hex'), now() - interval '1 second' FROM idempotency_keys WHERE key = 'crashed'",
      [request],
    )
    const ran = await admin.post(`${V1}/products`, unwritten, { 'idempotency-key': 'died-early' })
    t.equal(ran.status, 201, 'taken over, and run')
    t.equal(ran.headers.get('idempotent-replayed'), null)
  }),
)

t.test('a key older than 24 hours is forgotten, and pruned', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const key = { 'idempotency-key': 'yesterday' }
    const first = await admin.post(`${V1}/products`, productBody(), key)
    await api.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'", [])
    const later = await admin.post(`${V1}/products`, productBody(), key)
    t.equal(later.status, 201, 'a new request, not a replay nor a reuse')
    t.not(later.body.id, first.body.id)
    await api.db.query("UPDATE idempotency_keys SET created_at = now() - interval '25 hours'", [])
    const { idempotencyKeys } = await import('../../src/db/idempotency.js')
    t.equal(await idempotencyKeys(api.db).prune(), 1)
  }),
)


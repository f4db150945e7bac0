// Many instances behave as one (DESIGN "Scale"): three service processes behind HAProxy, on
// PostgreSQL through PgBouncer in transaction mode, sharing Redis. Sessions, If-Match, rate
// limits, idempotency keys and event streams hold across instances, and kill -9 of one under load
// loses no acknowledged write while the balancer routes around it.
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import pg from 'pg'
import t from 'tap'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { missingInfrastructure, startHaproxy, startPgBouncer } from '../helpers/infrastructure.js'
import { adminCookie, adminToken, sendJson as send, started, type Running } from '../helpers/service-process.js'
import { until } from '../helpers/until.js'

const V1 = '/api/v1'
const REDIS = 'redis://127.0.0.1:6379'

const redis = await new Promise<boolean>((resolve) => {
  const socket = connect(6379, '127.0.0.1', () => (socket.end(), resolve(true)))
  socket.on('error', () => resolve(false))
})
const skip = !databaseKinds().includes('postgres') ? 'needs PostgreSQL' : !redis ? 'needs Redis on 127.0.0.1:6379' : missingInfrastructure()


t.test('three instances behind HAProxy, through PgBouncer in transaction mode, with Redis, behave as one', { skip }, async (t) => {
  const database = await createTestDatabase('postgres')
  t.teardown(() => database.drop())
  const direct = (database.config as { url: string }).url
  const pooled = await startPgBouncer(t, direct)
  const env = {
    DATABASE_URL: `${pooled}?pgbouncer=true`,
    // Migrations hold an advisory lock for their whole length: one session, not a pooler's.
    DATABASE_DIRECT_URL: direct,
    REDIS_URL: REDIS,
    REDIS_KEY_PREFIX: `scale-${randomBytes(6).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    RATE_LIMIT_EXEMPT: '',
    RATE_LIMIT_ANONYMOUS: '12',
  }
  // Started together on an empty database: they migrate once, and all get ready.
  const instances: Running[] = await Promise.all([1, 2, 3].map(() => started(t, env)))
  const [a, b, c] = instances.map((instance) => instance.origin) as [string, string, string]
  const token = await adminToken(a)
  const admin = { authorization: `Bearer ${token}` }

  t.test('a session made on one instance works on the others', async (t) => {
    const cookie = await adminCookie(a)
    for (const origin of [b, c]) {
      const res = await fetch(`${origin}${V1}/sessions/current`, { headers: { cookie } })
      t.equal(res.status, 200, `${origin}: signed in`)
    }
  })

  t.test('If-Match is exact across instances: a tag from one is current or stale on every other', async (t) => {
    const created = await send('POST', `${a}${V1}/products`, { name: 'Shared', sku: 'SCALE-ETAG', price: 5 }, admin)
    t.equal(created.status, 201)
    const { id } = (await created.json()) as { id: string }
    const first = created.headers.get('etag')!
    const changed = await send('PATCH', `${b}${V1}/products/${id}`, { stock: 3 }, { ...admin, 'if-match': first })
    t.equal(changed.status, 200, 'the tag from a is current on b')
    const stale = await send('PATCH', `${c}${V1}/products/${id}`, { stock: 4 }, { ...admin, 'if-match': first })
    t.equal(stale.status, 412, 'and stale on c once b changed the item')
    t.equal((await fetch(`${c}${V1}/products/${id}`, { headers: admin })).headers.get('etag'), changed.headers.get('etag'), 'every instance tags the item alike')
  })

  t.test('an idempotency key holds across instances', async (t) => {
    const key = { 'idempotency-key': `scale-${randomBytes(4).toString('hex')}` }
    const post = (origin: string, body: unknown) => send('POST', `${origin}${V1}/products`, body, { ...admin, ...key })
    const first = await post(a, { name: 'Once', sku: 'SCALE-ONCE', price: 1 })
    const replayed = await post(b, { name: 'Once', sku: 'SCALE-ONCE', price: 1 })
    t.equal(replayed.status, 201)
    t.equal(replayed.headers.get('idempotent-replayed'), 'true', 'b replays what a did')
    t.same(await replayed.json(), await first.json())
    t.equal((await post(c, { name: 'Other', sku: 'SCALE-OTHER', price: 1 })).status, 422, 'another body under the key is refused on c')
  })

  t.test('rate limits are counted for the service, not per instance', async (t) => {
    // Each instance trusts the balancer's address; the client is the address it forwards.
    const client = { 'x-forwarded-for': '198.51.100.7' }
    const statuses = []
    for (let i = 0; i < 12; i++) statuses.push((await fetch(`${[a, b, c][i % 3]}${V1}/products?size=1`, { headers: client })).status)
    t.same(statuses, Array(12).fill(200), 'twelve requests a minute, spread over three instances')
    const over = await fetch(`${a}${V1}/products?size=1`, { headers: client })
    t.equal(over.status, 429, 'the thirteenth is over the quota, wherever it lands')
    t.equal((await fetch(`${b}${V1}/products?size=1`, { headers: { 'x-forwarded-for': '198.51.100.8' } })).status, 200, 'another client is not')
  })

  t.test('an event written on one instance reaches a stream on another', async (t) => {
    // Bounded: a stream that never shows the event ends the test in 15 s instead of hanging it.
    const stream = await fetch(`${c}${V1}/events`, { headers: { ...admin, accept: 'text/event-stream' }, signal: AbortSignal.timeout(15_000) })
    t.equal(stream.status, 200)
    const created = await send('POST', `${a}${V1}/products`, { name: 'Streamed', sku: 'SCALE-STREAM', price: 2 }, admin)
    const { id } = (await created.json()) as { id: string }
    const reader = stream.body!.getReader()
    let seen = ''
    while (!seen.includes(id)) {
      const { value, done } = await reader.read()
      if (done) break
      seen += new TextDecoder().decode(value)
    }
    await reader.cancel()
    t.match(seen, new RegExp(`event: products\\.created\\ndata: \\{[^\\n]*"id":"${id}"`), 'c streamed the creation a made')
  })

  t.test('kill -9 of an instance under load: no acknowledged write is lost, and the balancer routes around it', async (t) => {
    const balancer = await startHaproxy(t, { a: Number(new URL(a).port), b: Number(new URL(b).port), c: Number(new URL(c).port) })
    await until('the balancer to see three healthy instances', async () => (Object.values(await balancer.states()).every((s) => s === 'UP') ? true : undefined))
    const acknowledged: string[] = []
    let refused = 0
    let next = 0
    const write = async (sku: string) => {
      try {
        const res = await send('POST', `${balancer.origin}${V1}/products`, { name: 'Under load', sku, price: 1 }, admin)
        if (res.status === 201) acknowledged.push(sku)
        else refused++
      } catch {
        refused++
      }
    }
    // Six clients write 150 products; when 50 have been acknowledged, b is killed mid-stream.
    const killer = until('50 acknowledged writes', async () => (acknowledged.length >= 50 ? true : undefined), { everyMs: 5, tries: 20_000 }).then(() => instances[1]!.child.kill('SIGKILL'))
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < 150) await write(`SCALE-LOAD-${next++}`)
      }),
    )
    await killer
    await until('the balancer to mark b down', async () => ((await balancer.states()).b?.startsWith('DOWN') ? true : undefined))
    const before = acknowledged.length
    for (let i = 0; i < 30; i++) await write(`SCALE-AFTER-${i}`)
    t.equal(acknowledged.length - before, 30, 'with b down, every write through the balancer succeeds on a and c')
    // Each client has one write in flight at a time: six at b when it dies. Until b is marked down,
    // a write routed there on a new connection is refused and sent on to a or c (redispatch), but
    // one sent on a connection HAProxy kept open to b (it reuses idle ones) fails after it was
    // sent, and a POST is not sent twice: at most one more per connection b had, six.
    t.ok(refused <= 12, `at most the writes b had in flight, or was sent on its open connections, were lost to the kill (${refused})`)

    const client = new pg.Client({ connectionString: direct })
    await client.connect()
    const { rows } = await client.query<{ sku: string }>(`SELECT sku FROM products WHERE sku LIKE 'SCALE-LOAD-%' OR sku LIKE 'SCALE-AFTER-%'`)
    await client.end()
    const stored = new Set(rows.map((row) => row.sku))
    t.same(acknowledged.filter((sku) => !stored.has(sku)), [], 'every acknowledged write is stored')
    t.ok(stored.size >= acknowledged.length, 'and nothing acknowledged is missing from the count')
  })
})

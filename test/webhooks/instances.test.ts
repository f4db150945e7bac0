// Webhook deliveries across instances and their ends: two instances deliver each event once, an
// instance that stops gives back what it was delivering, and one killed mid-delivery loses
// nothing: another makes the attempt once the claim lapses.
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { eachDatabase, startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/receiver.js'
import { adminCookie, started } from '../helpers/service-process.js'
import { until } from '../helpers/until.js'

interface Logged {
  webhook_id: string
  status: string
  attempts: number
  claimed_until: Date | null
}

const deliveries = (api: Pick<Api, 'db'>) =>
  api.db.query<Logged>('SELECT webhook_id, status::text, attempts, claimed_until FROM webhook_deliveries ORDER BY event_id', [])

if (databaseKinds().includes('postgres')) {
  t.test('two instances on one database: every event is delivered once', async (t) => {
    const first = await startApi(t, 'postgres')
    const second = await startApi(t, 'postgres', undefined, { besides: first })
    const receiver = await startReceiver(t)
    await first.admin.post(`${V1}/webhooks`, { url: receiver.url, events: ['products.created'] })
    const count = 30
    await Promise.all(Array.from({ length: count }, (_, i) => (i % 2 ? first : second).admin.post(`${V1}/products`, productBody())))
    await receiver.count(count)
    const log = await until('every delivery recorded', async () => {
      const rows = await deliveries(first)
      return rows.length === count && rows.every((d) => d.status === 'succeeded') ? rows : undefined
    })
    t.same(log.filter((d) => d.attempts !== 1), [], 'each delivery was attempted once: no instance claimed one another had')
    t.equal(new Set(receiver.received.map((r) => r.id)).size, count, 'each event arrived')
    t.equal(receiver.received.length, count, 'and only once')
  })

  t.test('kill -9 mid-delivery: the delivery happens later, once the claim lapses, with the same webhook-id', async (t) => {
    const database = await createTestDatabase('postgres')
    t.teardown(() => database.drop())
    const receiver = await startReceiver(t)
    receiver.answer('hang')
    // A claim lasts twice the time limit and a second: 3 s here.
    const service = await started(t, { DATABASE_URL: (database.config as { url: string }).url, WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOK_TIMEOUT_MS: '1000' })
    const headers = { cookie: await adminCookie(service.origin), 'content-type': 'application/json', origin: service.origin }
    const webhook = await fetch(`${service.origin}${V1}/webhooks`, { method: 'POST', headers, body: JSON.stringify({ url: receiver.url, events: ['products.*'] }) })
    t.equal(webhook.status, 201)
    await fetch(`${service.origin}${V1}/products`, { method: 'POST', headers, body: JSON.stringify(productBody()) })
    const [attempt] = await receiver.count(1)
    service.child.kill('SIGKILL')
    await service.exited

    const other = await startApi(t, 'postgres', undefined, { besides: { databaseConfig: database.config } as Api })
    const [, retried] = await receiver.count(2)
    t.equal(retried!.id, attempt!.id, 'the same webhook-id')
    const [logged] = await until('the delivery recorded', async () => {
      const rows = await deliveries(other)
      return rows[0]?.status === 'succeeded' ? rows : undefined
    })
    t.match(logged, { attempts: 2, claimed_until: null }, 'the killed attempt counts')
  })
}

t.test('an instance that stops gives back the delivery it was making; another makes it', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    receiver.answer('hang')
    await api.admin.post(`${V1}/webhooks`, { url: receiver.url, events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    const [attempt] = await receiver.count(1)
    await api.app.close()
    const [released] = await deliveries(api)
    t.match(released, { status: 'pending', attempts: 0, claimed_until: null }, 'given back: not counted, not claimed')

    // The next instance on the database (its connection outlives the first).
    const next = await buildApp(testConfig({ database: api.databaseConfig, migrateOnStart: false }), { database: api.db })
    t.teardown(() => next.close())
    const [, again] = await receiver.count(2)
    t.equal(again!.id, attempt!.id)
  }),
)

t.test('without WEBHOOKS_ALLOW_PRIVATE a URL must be https to a public address (422)', (t) =>
  eachDatabase(t, async (t) => {
    const kind = t.name as 'postgres' | 'pglite'
    const api = await startApi(t, kind, undefined, { config: { webhooks: { allowPrivate: false, timeoutMs: 2000, retryBaseMs: 50 } } })
    for (const url of ['https://127.0.0.1:8443/hooks', 'https://192.168.0.10/', 'https://localhost/hooks', 'http://hooks.example.com/', 'https://[fe80::1]/']) {
      const refused = await api.admin.post(`${V1}/webhooks`, { url, events: ['*'] })
      t.equal(refused.status, 422, url)
      t.equal(refused.body.error.details[0].field, 'url')
    }
    const created = await api.admin.post(`${V1}/webhooks`, { url: 'https://hooks.example.com/shop', events: ['*'] })
    t.equal(created.status, 201, 'a public name is accepted; it is checked when connecting')
    const changed = await api.admin.patch(`${V1}/webhooks/${created.body.id}`, { url: 'https://10.0.0.1/' })
    t.equal(changed.status, 422, 'and on every change')
  }),
)

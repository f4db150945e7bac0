// The service's metrics beside the requests': the event streams' lag (events committed that the
// tail has not read) and the webhook deliveries (outcomes counted, pending read from the table).
import { get, type IncomingMessage } from 'node:http'
import t, { type Test } from 'tap'
import type { Transaction } from '../../src/db/client.js'
import { eachDatabase, LOCK_WAIT_TIMEOUT_MS, startApi, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { startReceiver } from '../helpers/receiver.js'
import { until } from '../helpers/until.js'
import { samples, valueOf } from './scrape.js'

async function scrape(t: Test, api: Api): Promise<(name: string, labels?: Record<string, string>) => number | undefined> {
  const answer = await api.get('/metrics')
  t.equal(answer.status, 200, 'scraped')
  const all = samples(answer.text)
  return (name, labels) => valueOf(all, name, labels)
}

/** An event stream as the admin `token` opens it; `seen(type, n)` resolves once `n` events of `type` have come. */
async function openStream(t: Test, api: Api, token: string) {
  const response = await new Promise<IncomingMessage>((resolve, reject) =>
    get(`${api.origin}${V1}/events`, { agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } }, resolve).on('error', reject),
  )
  t.teardown(() => void response.destroy())
  let text = ''
  const waiting: (() => void)[] = []
  response.setEncoding('utf8')
  response.on('data', (chunk: string) => {
    text += chunk
    for (const wake of waiting.splice(0)) wake()
  })
  const count = (type: string) => text.split(`\nevent: ${type}\n`).length - 1
  return {
    status: response.statusCode,
    async seen(type: string, n: number): Promise<void> {
      while (count(type) < n) await new Promise<void>((resolve) => waiting.push(resolve))
    },
  }
}

/** Holds a transaction open until `release`, with an id and the events table announced, as a slow write would. */
async function holdWrite(api: Api, lock = '') {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let begun!: () => void
  const holding = new Promise<void>((resolve) => (begun = resolve))
  const done = api.db.transaction(
    async (tx: Transaction) => {
      await tx.query(`SELECT pg_current_xact_id()${lock}`, [])
      begun()
      await released
    },
    { announce: 'events' },
  )
  await holding
  return async () => {
    release()
    await done
  }
}

t.test("event lag: nothing while no stream is open; events the tail has not read, and the oldest one's wait", (t) =>
  eachDatabase(t, async (t, api) => {
    let read = await scrape(t, api)
    t.equal(read('resourceful_events_unseen'), 0, 'no stream, no tail: nobody waits')
    t.equal(read('resourceful_events_lag_seconds'), 0)

    const admin = await api.newUser({ roles: ['admin'] })
    const stream = await openStream(t, api, admin.token)
    t.equal(stream.status, 200)
    t.equal((await admin.api.post(`${V1}/products`, productBody())).status, 201)
    await stream.seen('products.created', 1)
    read = await scrape(t, api)
    t.equal(read('resourceful_events_unseen'), 0, 'the tail has read the event it streamed')
    t.equal(read('resourceful_events_lag_seconds'), 0)

    // PGlite is one connection: no transaction can stay open while another commits.
    if (!api.db.capabilities.concurrentWriters) return
    const release = await holdWrite(api)
    t.equal((await admin.api.post(`${V1}/products`, productBody())).status, 201, 'committed behind a slower write')
    read = await scrape(t, api)
    t.equal(read('resourceful_events_unseen'), 1, 'above the horizon: the tail cannot read it yet')
    t.ok(read('resourceful_events_lag_seconds')! >= 0, 'and it has been waiting')
    await release()
    await stream.seen('products.created', 2)
    read = await scrape(t, api)
    t.equal(read('resourceful_events_unseen'), 0, 'read once the slower write ended')
  }),
)

t.test('webhook deliveries: attempts counted by outcome, and the deliveries still to be made', (t) =>
  eachDatabase(t, async (t, api) => {
    let read = await scrape(t, api)
    for (const outcome of ['succeeded', 'retrying', 'failed']) t.equal(read('resourceful_webhook_deliveries_total', { outcome }), 0, `${outcome}: 0 from the start`)
    t.equal(read('resourceful_webhook_deliveries_pending'), 0)

    const receiver = await startReceiver(t)
    // The first attempt gets no answer (a failure at WEBHOOK_TIMEOUT_MS), its retry a 204.
    receiver.answer('hang')
    t.equal((await api.admin.post(`${V1}/webhooks`, { url: receiver.url, events: ['products.*'] })).status, 201)
    t.equal((await api.admin.post(`${V1}/products`, productBody())).status, 201)
    await receiver.count(1)
    read = await scrape(t, api)
    t.equal(read('resourceful_webhook_deliveries_pending'), 1, 'pending while its attempt is under way')
    t.equal(read('resourceful_webhook_deliveries_total', { outcome: 'succeeded' }), 0)

    read = await until('the retry to succeed', async () => {
      const now = await scrape(t, api)
      return now('resourceful_webhook_deliveries_total', { outcome: 'succeeded' }) === 1 ? now : undefined
    })
    t.equal(read('resourceful_webhook_deliveries_total', { outcome: 'retrying' }), 1, 'the attempt that timed out')
    t.equal(read('resourceful_webhook_deliveries_pending'), 0, 'delivered')

    // 410 Gone: failed for good, and the webhook disabled.
    receiver.answer(410)
    t.equal((await api.admin.post(`${V1}/products`, productBody())).status, 201)
    read = await until('the delivery to fail', async () => {
      const now = await scrape(t, api)
      return now('resourceful_webhook_deliveries_total', { outcome: 'failed' }) === 1 ? now : undefined
    })
    t.equal(read('resourceful_webhook_deliveries_total', { outcome: 'succeeded' }), 1)
    t.equal(read('resourceful_webhook_deliveries_pending'), 0)
  }),
)

t.test('a reading the database cannot give is NaN in that scrape; the rest is served', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  // Statements past the limit are cancelled; the tables are locked by a write that does not end.
  const api = await startApi(t, 'postgres', undefined, { statementTimeoutMs: LOCK_WAIT_TIMEOUT_MS })
  const admin = await api.newUser({ roles: ['admin'] })
  const stream = await openStream(t, api, admin.token)
  t.equal((await admin.api.post(`${V1}/products`, productBody())).status, 201)
  await stream.seen('products.created', 1)
  const release = await holdWrite(api, '; LOCK TABLE events, webhook_deliveries IN ACCESS EXCLUSIVE MODE')
  const read = await scrape(t, api)
  t.ok(Number.isNaN(read('resourceful_events_unseen')), 'unseen: unknown')
  t.ok(Number.isNaN(read('resourceful_events_lag_seconds')), 'lag: unknown')
  t.ok(Number.isNaN(read('resourceful_webhook_deliveries_pending')), 'pending: unknown')
  t.equal(read('resourceful_db_pool_max_connections', { pool: 'primary' }), 10, 'the rest as always')
  await release()
  t.equal((await scrape(t, api))('resourceful_webhook_deliveries_pending'), 0, 'and back')
})

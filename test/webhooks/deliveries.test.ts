// Webhooks end to end, over real HTTP: registration, signed deliveries that the Standard Webhooks
// verifier accepts, the delivery log, retries, and what disables a webhook.
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'
import { startReceiver, type Receiver } from '../helpers/receiver.js'
import { until } from '../helpers/until.js'

async function register(api: Api, receiver: Receiver, body: Record<string, unknown> = {}) {
  const created = await api.admin.post(`${V1}/webhooks`, { url: receiver.url, events: ['*'], ...body })
  if (created.status !== 201) throw new Error(`webhook not created: ${created.text}`)
  return created.body as { id: string; secret: string }
}

/**
 * A delivery's second attempt recorded, not only claimed: an attempt is counted when it is
 * claimed, and its outcome sets the next one, after the update.
 */
const secondAttemptRecorded = (d: any) => d?.attempts === 2 && d.next_attempt_at !== null && Date.parse(d.next_attempt_at) > Date.parse(d.updated_at)

/** The webhook's deliveries once `done` holds for them. */
const deliveriesOnce = (api: Api, webhook: string, done: (list: any[]) => boolean) =>
  until('the delivery log', async () => {
    const list = await api.admin.get(`${V1}/webhooks/${webhook}/deliveries`)
    return done(list.body) ? (list.body as any[]) : undefined
  })

t.test('a registered webhook gets each event, signed so that the Standard Webhooks verifier accepts it', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    const webhook = await register(api, receiver, { description: 'orders to the warehouse' })
    t.match(webhook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'the secret is generated and shown once')
    const read = await api.admin.get(`${V1}/webhooks/${webhook.id}`)
    t.notOk('secret' in read.body, 'and never again')
    t.same(read.body.active, true)

    const product = (await api.admin.post(`${V1}/products`, productBody())).body
    const [delivery] = await receiver.count(1)
    const payload = new Webhook(webhook.secret).verify(delivery!.body, delivery!.headers as Record<string, string>) as any
    t.equal(payload.type, 'products.created')
    t.equal(payload.data.id, product.id, 'the data is the item as an admin reads it')
    t.equal(payload.data.cost, product.cost)
    t.match(payload.timestamp, /^\d{4}-\d\d-\d\dT/)
    const [event] = (await api.admin.get(`${V1}/events?type=products.created`)).body
    t.equal(delivery!.id, String(event.id), 'webhook-id is the event id')
    t.equal(delivery!.headers['content-type'], 'application/json')

    const [logged] = await deliveriesOnce(api, webhook.id, (list) => list[0]?.status === 'succeeded')
    t.match(logged, { event_id: event.id, event_type: 'products.created', status: 'succeeded', attempts: 1, last_status: 204, last_error: null, next_attempt_at: null })
    const one = await api.admin.get(`${V1}/webhooks/${webhook.id}/deliveries/${logged.id}`)
    t.equal(one.status, 200)
    t.ok(one.headers.get('etag'))
    const post = await api.admin.post(`${V1}/webhooks/${webhook.id}/deliveries`, {})
    t.equal(post.status, 405, 'the log is read-only')
    t.equal(post.headers.get('allow'), 'GET, HEAD, OPTIONS')
    t.equal((await api.admin.delete(`${V1}/webhooks/${webhook.id}/deliveries/${logged.id}`)).status, 405)
  }),
)

t.test('a webhook and its log are for admins only', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    const webhook = await register(api, receiver)
    const { api: user } = await api.newUser()
    t.equal((await user.get(`${V1}/webhooks`)).status, 403)
    t.equal((await user.post(`${V1}/webhooks`, { url: receiver.url, events: ['*'] })).status, 403)
    t.equal((await user.get(`${V1}/webhooks/${webhook.id}/deliveries`)).status, 403)
    t.equal((await api.anonymous.get(`${V1}/webhooks/${webhook.id}/deliveries`)).status, 401)
  }),
)

t.test('a given secret is kept; the webhook records its own events without it', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`
    const webhook = await register(api, receiver, { secret, events: ['products.created'] })
    t.equal(webhook.secret, secret)
    const [event] = (await api.admin.get(`${V1}/events?type=webhooks.created`)).body
    t.equal(event.item_id, webhook.id)
    t.notOk('secret' in event.data, 'no event shows the secret')
    await api.admin.post(`${V1}/products`, productBody())
    const [delivery] = await receiver.count(1)
    t.ok(new Webhook(secret).verify(delivery!.body, delivery!.headers as Record<string, string>))
    const bad = await api.admin.post(`${V1}/webhooks`, { url: receiver.url, events: ['*'], secret: 'not-a-secret' })
    t.equal(bad.status, 422)
    t.equal(bad.body.error.details[0].field, 'secret')
  }),
)

t.test('patterns choose the events: a type, every type of a collection', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    const webhook = await register(api, receiver, { events: ['orders.*', 'reviews.created'] })
    const { api: customer } = await api.newUser()
    await api.admin.post(`${V1}/products`, productBody({ status: 'active' }))
    const order = await customer.post(`${V1}/orders`, {})
    await customer.patch(`${V1}/orders/${order.body.id}`, { note: 'ring twice' }, { 'if-match': order.headers.get('etag')! })
    const received = await receiver.count(2)
    // Deliveries are not in order (up to 16 attempts at once): the set is what counts.
    t.same(received.map((r) => JSON.parse(r.body).type).sort(), ['orders.created', 'orders.updated'], 'the product event was not for it')
    const log = await deliveriesOnce(api, webhook.id, (list) => list.length === 2 && list.every((d) => d.status === 'succeeded'))
    t.same(log.map((d) => d.event_type).sort(), ['orders.created', 'orders.updated'])
    const filtered = await api.admin.get(`${V1}/webhooks/${webhook.id}/deliveries?event_type=orders.updated`)
    t.equal(filtered.body.length, 1)
    const wrong = await api.admin.post(`${V1}/webhooks`, { url: receiver.url, events: ['orders'] })
    t.equal(wrong.status, 422)
  }),
)

t.test('a receiver that fails and then succeeds gets the retry, with the same webhook-id', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    receiver.answer(500)
    const webhook = await register(api, receiver, { events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    const [first, second] = await receiver.count(2)
    t.equal(second!.id, first!.id, 'the same webhook-id')
    t.ok(new Webhook(webhook.secret).verify(second!.body, second!.headers as Record<string, string>), 'signed anew')
    const [logged] = await deliveriesOnce(api, webhook.id, (list) => list[0]?.status === 'succeeded')
    t.match(logged, { attempts: 2, last_status: 204, last_error: null })
    const read = (await api.admin.get(`${V1}/webhooks/${webhook.id}`)).body
    t.equal(read.failing_since, null, 'a success ends the failing')
  }),
)

t.test('while failing, the log shows the error and the next attempt', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    // The first retry comes after 50 ms, the second after 3 s: the log is read in between.
    receiver.answer(503, 503)
    const webhook = await register(api, receiver, { events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    const [logged] = await deliveriesOnce(api, webhook.id, (list) => secondAttemptRecorded(list[0]))
    t.match(logged, { status: 'pending', last_status: 503, last_error: 'The receiver answered 503.' })
    t.ok(Date.parse(logged.next_attempt_at) - Date.parse(logged.updated_at) >= 2900, 'the next attempt is due 60 bases (3 s) later')
    const read = (await api.admin.get(`${V1}/webhooks/${webhook.id}`)).body
    t.ok(read.failing_since, 'the webhook is failing')
    t.equal(read.active, true)
  }),
)

t.test('a 410 from the receiver disables the webhook; enabling it starts afresh', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    receiver.answer(410)
    const webhook = await register(api, receiver, { events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    const [logged] = await deliveriesOnce(api, webhook.id, (list) => list[0]?.status === 'failed')
    t.match(logged, { attempts: 1, last_status: 410, next_attempt_at: null })
    const read = (await api.admin.get(`${V1}/webhooks/${webhook.id}`)).body
    t.match(read, { active: false, disabled_reason: 'The receiver answered 410 Gone.' })
    // The reason comes back in a PUT of what was read, and is ignored; a long one is refused like any field.
    const path = `${V1}/webhooks/${webhook.id}`
    t.equal((await api.admin.put(path, read)).status, 200, 'a PUT of what was read')
    const long = await api.admin.put(path, { ...read, disabled_reason: 'x'.repeat(501) })
    t.equal(long.status, 422)
    t.match(long.body.error, { code: 'VALIDATION_ERROR', details: [{ field: 'disabled_reason' }] })

    const enabled = await api.admin.patch(path, { active: true })
    t.match(enabled.body, { active: true, disabled_reason: null, failing_since: null })
    await api.admin.post(`${V1}/products`, productBody())
    await receiver.count(2)
    t.equal(JSON.parse(receiver.received[1]!.body).type, 'products.created')
  }),
)

t.test('a webhook that has failed every delivery for 24 hours is disabled', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    receiver.answer(500, 500)
    const webhook = await register(api, receiver, { events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    await deliveriesOnce(api, webhook.id, (list) => list[0]?.attempts === 1 && list[0].last_status === 500)
    // A day has passed since the first failure.
    await api.db.query("UPDATE webhooks SET failing_since = now() - interval '25 hours' WHERE id = $1", [webhook.id])
    const read = await until('the webhook disabled', async () => {
      const body = (await api.admin.get(`${V1}/webhooks/${webhook.id}`)).body
      return body.active ? undefined : body
    })
    t.equal(read.disabled_reason, 'Every delivery failed for 24 hours.')
  }),
)

t.test('a delivery whose every attempt was made, the last cut short by a dying instance, has failed', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    receiver.answer(500)
    const webhook = await register(api, receiver, { events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    await deliveriesOnce(api, webhook.id, (list) => list[0]?.attempts === 1 && list[0].last_status === 500)
    // As if the eighth attempt's instance had died: all made, the claim lapsed, due again.
    await api.db.query("UPDATE webhook_deliveries SET attempts = 8, next_attempt_at = now(), claimed_until = now() - interval '1 second'", [])
    const [logged] = await deliveriesOnce(api, webhook.id, (list) => list[0]?.status === 'failed')
    t.match(logged, { attempts: 8, last_status: null, last_error: 'Its last attempt was cut short: the instance making it stopped.', next_attempt_at: null })
    t.equal(receiver.received.length, 1, 'no ninth attempt was sent')
  }),
)

t.test('a receiver that does not answer in time has failed the attempt', (t) =>
  eachDatabase(t, async (t, api) => {
    const receiver = await startReceiver(t)
    // WEBHOOK_TIMEOUT_MS is 2000 in tests; the second retry comes 3 s after the second attempt.
    receiver.answer('hang', 'hang')
    const webhook = await register(api, receiver, { events: ['products.*'] })
    await api.admin.post(`${V1}/products`, productBody())
    const [logged] = await deliveriesOnce(api, webhook.id, (list) => secondAttemptRecorded(list[0]))
    t.match(logged, { status: 'pending', last_status: null, last_error: 'No answer within 2000 ms.' })
  }),
)

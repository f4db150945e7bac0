// The change feed as server-sent events: GET /events with Accept: text/event-stream, over a real
// listening server and fetch (inject would buffer a stream that never ends).
import { get, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import t, { type Test } from 'tap'
import { bearer, eachDatabase, startApi, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { until } from '../helpers/until.js'

interface Message {
  id?: string
  event?: string
  data?: string
  retry?: string
}

interface Stream {
  status: number
  headers: IncomingHttpHeaders
  /** The parsed body of an answer that is not a stream (an error). */
  json(): Promise<any>
  /** Resolves with the next `n` events (messages with data), in order. */
  events(n: number): Promise<{ id: number; type: string; data: Record<string, any> }[]>
  /** Resolves when the server ends the stream. */
  ended: Promise<void>
  retry: Promise<string>
  /** Resolves with the first comment line (a heartbeat). */
  comment: Promise<string>
  close(): void
  /** Starts reading a stream opened paused. */
  resume(): void
  /** The events received so far, taken from the queue. */
  received(): { id: number; type: string }[]
}

/**
 * Opens a stream on a connection of its own (node:http, no agent: nothing is left behind when it
 * closes) and parses its messages (HTML Living Standard §9.2.6) as they arrive.
 */
async function openStream(t: Test, api: Api, query = '', headers: Record<string, string> = {}, { paused = false } = {}): Promise<Stream> {
  const response = await new Promise<IncomingMessage>((resolve, reject) => {
    const request = get(`${api.origin}${V1}/events${query}`, { agent: false, headers: { accept: 'text/event-stream', ...headers } }, resolve)
    request.on('error', reject)
  })
  t.teardown(() => void response.destroy())
  const queue: Message[] = []
  const waiting: (() => void)[] = []
  let retry: (value: string) => void
  const retried = new Promise<string>((resolve) => (retry = resolve))
  let comment: (line: string) => void
  const commented = new Promise<string>((resolve) => (comment = resolve))
  let text = ''
  let buffer = ''
  response.setEncoding('utf8')
  const read = () => response.on('data', (chunk: string) => {
    text += chunk
    buffer += chunk
    let end: number
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const block = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const message: Message = {}
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          comment!(line)
          continue
        }
        const at = line.indexOf(': ')
        message[line.slice(0, at) as keyof Message] = line.slice(at + 2)
      }
      if (message.retry) retry!(message.retry)
      if (message.data !== undefined) queue.push(message)
      for (const wake of waiting.splice(0)) wake()
    }
  })
  if (!paused) read()
  const ended = new Promise<void>((resolve) => response.once('close', () => resolve()))
  return {
    status: response.statusCode!,
    headers: response.headers,
    ended,
    retry: retried,
    comment: commented,
    json: async () => (await ended, JSON.parse(text)),
    close: () => void response.destroy(),
    resume: () => void read(),
    received: () => queue.splice(0).map((m) => ({ id: Number(m.id), type: m.event! })),
    async events(n) {
      while (queue.length < n) await new Promise<void>((resolve) => waiting.push(resolve))
      return queue.splice(0, n).map((m) => ({ id: Number(m.id), type: m.event!, data: JSON.parse(m.data!) }))
    },
  }
}

/** An admin's Authorization header: streams are opened with fetch, not the test client. */
async function adminHeaders(api: Api): Promise<Record<string, string>> {
  const user = await api.newUser({ roles: ['admin'] })
  return bearer(user.token)
}

t.test('an open stream gets each new event: id, event, data; retry first', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = await adminHeaders(api)
    const stream = await openStream(t, api, '', admin)
    t.equal(stream.status, 200)
    t.match(stream.headers['content-type'], /^text\/event-stream/)
    t.equal(stream.headers['cache-control'], 'no-store')
    t.ok(stream.headers['x-request-id'])
    t.equal(await stream.retry, '2000')
    const created = (await api.admin.post(`${V1}/products`, productBody())).body
    const [event] = await stream.events(1)
    t.equal(event!.type, 'products.created')
    t.match(event!.data, { type: 'products.created', collection: 'products', item_id: created.id, data: { sku: created.sku } })
    t.equal(event!.data.id, event!.id, 'the id line is the event id')
    t.notOk('position' in event!.data)
  }),
)

t.test('a stream resumes after Last-Event-ID (or after=) with exactly the events it missed', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = await adminHeaders(api)
    for (let i = 0; i < 3; i++) await api.admin.post(`${V1}/products`, productBody())
    const [first, second, third] = (await api.admin.get(`${V1}/events`)).body
    const resumed = await openStream(t, api, `?after=${third.id}`, { ...admin, 'last-event-id': String(first.id) })
    const missed = await resumed.events(2)
    t.same(missed.map((e) => e.id), [second.id, third.id], 'Last-Event-ID wins over after=')
    await api.admin.post(`${V1}/products`, productBody())
    t.equal((await resumed.events(1))[0]!.type, 'products.created', 'then the live ones')
    const filtered = await openStream(t, api, `?after=${first.id}&type=orders.*`, admin)
    await (await api.newUser()).api.post(`${V1}/orders`, {})
    t.equal((await filtered.events(1))[0]!.type, 'orders.created', 'the filters of the feed')
  }),
)

t.test('a client that resumes on a second instance gets exactly what it missed', { skip: !databaseKinds().includes('postgres') && 'PostgreSQL only' }, async (t) => {
  const one = await startApi(t, 'postgres')
  const two = await startApi(t, 'postgres', undefined, { besides: one })
  const admin = await adminHeaders(one)
  const stream = await openStream(t, one, '', admin)
  await one.admin.post(`${V1}/products`, productBody())
  const [seen] = await stream.events(1)
  stream.close()
  for (let i = 0; i < 2; i++) await one.admin.post(`${V1}/products`, productBody())
  const resumed = await openStream(t, two, '', { ...admin, 'last-event-id': String(seen!.id) })
  const missed = await resumed.events(2)
  const all = (await one.admin.get(`${V1}/events`)).body.map((e: { id: number }) => e.id)
  t.same(missed.map((e) => e.id), all.slice(1))
  await two.admin.post(`${V1}/products`, productBody())
  t.equal((await resumed.events(1))[0]!.id, Math.max(...all) + 1)
})

t.test('who may stream, how many at once, and what else is 406', (t) =>
  eachDatabase(t, async (t, api) => {
    const user = await api.newUser()
    const refused = await openStream(t, api, '', bearer(user.token))
    t.equal(refused.status, 403)
    t.match(refused.headers['content-type'], /application\/json/)
    t.equal((await refused.json()).error.code, 'FORBIDDEN')
    const other = await api.anonymous.get(`${V1}/products`, { accept: 'text/event-stream' })
    t.equal(other.status, 406, 'other routes still answer JSON only')
    t.equal((await api.admin.get(`${V1}/events`, { accept: 'text/html' })).status, 406)
    t.equal((await api.admin.get(`${V1}/events`, { accept: 'text/event-stream;q=0.5, application/json' })).status, 200, 'JSON preferred')
    const bad = await api.admin.get(`${V1}/events`, { accept: 'text/event-stream', 'last-event-id': 'x' })
    t.equal(bad.status, 400)

    const admin = await adminHeaders(api)
    const streams = []
    for (let i = 0; i < 5; i++) streams.push(await openStream(t, api, '', admin))
    const sixth = await openStream(t, api, '', admin)
    t.equal(sixth.status, 429)
    t.equal((await sixth.json()).error.code, 'RATE_LIMITED')
    streams[0]!.close()
    await streams[0]!.ended
    // The server sees the close when its socket does; a new stream fits once it has.
    const seventh = await until('a free stream slot', () => freeSlot(t, api, admin))
    t.equal(seventh.status, 200)
    // A client that stops reading, its stream still open, does not hold the shutdown.
    await api.app.close()
    t.pass('closed')
  }),
)

t.test('a client that stops reading is cut off, and resumes from the table without a gap', (t) =>
  eachDatabase(t, async (t) => {
    const api = await startApi(t, t.name as 'postgres' | 'pglite', undefined, { config: { eventStreamsPerCaller: 1 } })
    const admin = await adminHeaders(api)
    const slow = await openStream(t, api, '', admin, { paused: true })
    t.equal(slow.status, 200)
    // Far more than the socket buffers hold, written at once: the stream is live when they arrive.
    const count = 30_000
    await api.db.query(
      "INSERT INTO events (type, collection, item_id, data) SELECT 'products.updated', 'products', gen_random_uuid(), jsonb_build_object('pad', repeat('x', 1000)) FROM generate_series(1, $1::int)",
      [count],
    )
    // Its one stream slot comes free only when the server has cut it off.
    const next = await until('the slow stream cut off', () => freeSlot(t, api, admin))
    t.equal(next.status, 200, 'the slow stream was cut off')
    next.close()
    await next.ended

    slow.resume()
    await slow.ended
    const got = slow.received()
    t.ok(got.length < count, `it had ${got.length} of ${count} events when it was cut off`)
    const lastId = got.at(-1)?.id
    const resumed = await until('a free stream slot', () => freeSlot(t, api, { ...admin, ...(lastId === undefined ? {} : { 'last-event-id': String(lastId) }) }))
    const rest = await resumed.events(count - got.length)
    t.same([...got, ...rest].map((e) => e.id), Array.from({ length: count }, (_, i) => (got[0]?.id ?? rest[0]!.id) + i), 'every event once, in order')
  }),
)

/** A stream opened with `headers`, or undefined while the caller's streams are at their cap (429). */
async function freeSlot(t: Test, api: Api, headers: Record<string, string>): Promise<Stream | undefined> {
  const stream = await openStream(t, api, '', headers)
  return stream.status === 429 ? undefined : stream
}

t.test('an open stream sends a comment line every EVENT_STREAM_HEARTBEAT_MS, so that proxies keep it', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { eventStreamHeartbeatMs: 100 } })
  const stream = await openStream(t, api, '', await adminHeaders(api))
  t.equal(await stream.comment, ': keep-alive')
})

t.test('shutdown ends the open streams, so that their clients reconnect elsewhere', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!)
  const stream = await openStream(t, api, '', await adminHeaders(api))
  await stream.retry
  await api.app.close()
  await stream.ended
  t.pass('the stream ended')
})

t.test('a batch that starts the event tail leaves it reading outside the batch: a stream opened after it gets every event', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = await adminHeaders(api)
    // The service's first list starts the tail (a list's revalidation follows it): here, an operation of a batch.
    const batch = await api.admin.post(`${V1}/batch`, { operations: [{ method: 'GET', path: '/products' }, { method: 'POST', path: '/products', body: productBody() }] })
    t.equal(batch.status, 200)
    const stream = await openStream(t, api, '', admin)
    const created = (await api.admin.post(`${V1}/products`, productBody())).body
    // The batch's own event may come first: it committed after the tail began.
    const events = await stream.events(1)
    if (events[0]!.data.item_id !== created.id) events.push(...(await stream.events(1)))
    t.match(events.at(-1)!.data, { type: 'products.created', item_id: created.id }, "the tail reads after the batch's transaction has ended")
  }),
)

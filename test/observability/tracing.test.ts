// OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set: a server span per request, named by
// its route, with its status and request id, and a client span per database statement under it.
// Spans go to an in-memory exporter, or to a collector on a loopback port (tracing-off.test.ts:
// without the variable, nothing of OpenTelemetry is loaded).
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { tracedDatabase } from '../../src/observability/traced-database.js'
import { tracesUrl } from '../../src/observability/tracing.js'
import { eachDatabase, testConfig, V1 } from '../helpers/api.js'
import { Spans, tracedApi } from '../helpers/spans.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const hex = (bytes: number) => randomBytes(bytes).toString('hex')

t.test('a request: a server span named by its route, with its status and request id, continuing the caller\'s trace; its statements under it', async (t) => {
  for (const kind of databaseKinds()) {
    await t.test(kind, async (t) => {
      const { api, spans, logs } = await tracedApi(t, kind)
      const created = await api.admin.post(`${V1}/products`, productBody())
      t.equal(created.status, 201)
      const [traceId, callerSpanId] = [hex(16), hex(8)]
      const read = await api.get(`${V1}/products/${created.body.id}`, { traceparent: `00-${traceId}-${callerSpanId}-01`, 'x-request-id': `trace-${kind}` })
      t.equal(read.status, 200)

      const server = await spans.find((span) => span.attributes['resourceful.request_id'] === `trace-${kind}`)
      t.equal(server.name, 'GET /api/v1/products/:id')
      t.equal(server.kind, SpanKind.SERVER)
      t.equal(server.attributes['http.route'], '/api/v1/products/:id')
      t.equal(server.attributes['http.request.method'], 'GET')
      t.equal(server.attributes['http.response.status_code'], 200)
      t.equal(server.resource.attributes['service.name'], 'resourceful-test')
      t.equal(server.spanContext().traceId, traceId, "the caller's trace (W3C traceparent)")
      t.equal(server.parentSpanContext?.spanId, callerSpanId)
      t.equal(read.headers.get('x-request-id'), `trace-${kind}`)
      const line = logs.find((entry) => entry.reqId === `trace-${kind}` && entry.msg === 'request completed')
      t.equal(line?.status, 200, 'the log line with the same request id')

      const statements = spans.childrenOf(server)
      t.ok(statements.length >= 1, 'the read ran under the request')
      for (const statement of statements) {
        t.equal(statement.kind, SpanKind.CLIENT)
        t.equal(statement.name, 'SELECT')
        t.equal(statement.attributes['db.system.name'], 'postgresql')
        t.equal(statement.attributes['db.operation.name'], 'SELECT')
        t.notOk(JSON.stringify(statement.attributes).includes(created.body.id), 'the text, never the parameters')
      }
      t.ok(statements.some((span) => /FROM\s+"?products"?/.test(String(span.attributes['db.query.text']))))

      const post = await spans.find((span) => span.name === 'POST /api/v1/products')
      t.equal(post.attributes['http.response.status_code'], 201)
      t.ok(spans.childrenOf(post).some((span) => span.name === 'WITH' && /INSERT INTO "products"/.test(String(span.attributes['db.query.text']))), 'a write in one statement, under the request')
      // A review's product keeps figures of it: that write is a transaction.
      t.equal((await api.admin.post(`${V1}/products/${created.body.id}/reviews`, { rating: 5, title: 'Fine', body: 'Fine.' })).status, 201)
      const review = await spans.find((span) => span.name === 'POST /api/v1/products/:parentId/reviews')
      const [transaction] = spans.childrenOf(review).filter((span) => span.name === 'transaction')
      t.ok(transaction, 'a write in a transaction: a transaction span under the request')
      t.ok(spans.childrenOf(transaction!).some((span) => span.name === 'INSERT' && /^INSERT INTO "reviews"/.test(String(span.attributes['db.query.text']))), 'its statements under it')
      const beforeCommit = transaction!.events.find((event) => event.name === 'statement before commit')
      t.match(beforeCommit?.attributes?.['db.query.text'], /^INSERT INTO events/, 'the event, written with the COMMIT')

      t.equal((await api.get(`/no-such-path-${hex(4)}`, { 'x-request-id': `stray-${kind}` })).status, 404)
      const stray = await spans.find((span) => span.attributes['resourceful.request_id'] === `stray-${kind}`)
      t.equal(stray.name, 'GET', 'no route took it: the method alone, never the path')
      t.equal(stray.attributes['http.response.status_code'], 404)

      const parentless = spans.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT && !span.parentSpanContext)
      t.same(parentless, [], "the background rounds' statements (webhook worker, housekeeping) are not traced")
    })
  }
})

t.test('a statement that fails: its span has the error and the SQLSTATE, never the message (it can quote the values)', async (t) => {
  for (const kind of databaseKinds()) {
    await t.test(kind, async (t) => {
      const { api, spans } = await tracedApi(t, kind)
      const body = productBody()
      t.equal((await api.admin.post(`${V1}/products`, body)).status, 201)
      t.equal((await api.admin.post(`${V1}/products`, body)).status, 409)
      const server = await spans.find((span) => span.name === 'POST /api/v1/products' && span.attributes['http.response.status_code'] === 409)
      const [insert] = spans.childrenOf(server).filter((span) => span.status.code === SpanStatusCode.ERROR)
      t.equal(insert?.name, 'WITH', 'the product and its event, one statement')
      t.equal(insert?.attributes['db.response.status_code'], '23505', 'unique_violation')
      t.equal(insert?.attributes['error.type'], '23505', 'found through the translated error')
      t.notOk(JSON.stringify([insert?.attributes, insert?.events, insert?.status]).includes(String(body.sku)), 'no value of the row')

      // In a transaction: a user's email is unique too, and users have a hook.
      const user = { email: 'twice@example.com', name: 'Twice', password: 'a long enough password' }
      t.equal((await api.admin.post(`${V1}/users`, user)).status, 201)
      t.equal((await api.admin.post(`${V1}/users`, user)).status, 409)
      const again = await spans.find((span) => span.name === 'POST /api/v1/users' && span.attributes['http.response.status_code'] === 409)
      const [transaction] = spans.childrenOf(again).filter((span) => span.name === 'transaction')
      const [failed] = spans.childrenOf(transaction!).filter((span) => span.status.code === SpanStatusCode.ERROR)
      t.equal(failed?.name, 'INSERT')
      t.equal(failed?.attributes['db.response.status_code'], '23505')
      t.equal(transaction!.status.code, SpanStatusCode.ERROR)
      t.equal(transaction!.attributes['error.type'], '23505', 'the transaction, through the translated error')
      t.notOk(JSON.stringify([failed?.attributes, transaction!.events]).includes(user.email), 'no value of the row')
    })
  }
})

t.test('the database seam: statements traced only under a live span; names, errors and replicas', (t) =>
  eachDatabase(t, async (t, api) => {
    const spans = new Spans()
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] })
    // The context manager, if no app of this process has registered one yet.
    provider.register()
    const tracer = provider.getTracer('test')
    const db = tracedDatabase(api.db, tracer)
    await db.query('SELECT 1', [])
    await db.transaction(async (tx) => void (await tx.query('SELECT 1', [])))
    t.same(spans.getFinishedSpans(), [], 'outside any span: nothing')

    const ended = tracer.startSpan('a request already answered')
    ended.end()
    await context.with(trace.setSpan(context.active(), ended), () => db.query('SELECT 2', []))
    t.same(spans.getFinishedSpans().map((span) => span.name), ['a request already answered'], "under a span that has ended (a stream's tail): nothing")

    spans.reset()
    await tracer.startActiveSpan('work', async (work) => {
      await db.replica.query('(SELECT 1)', [])
      await db.query('select 1', [], 'a_name')
      await t.rejects(db.query('SELECT * FROM no_such_table', []))
      await t.rejects(db.transaction(() => Promise.reject(new TypeError('not a database error'))))
      await t.rejects(db.transaction(() => Promise.reject('not even an Error')))
      work.end()
    })
    const finished = spans.getFinishedSpans()
    t.same(finished.map((span) => span.name), ['SQL', 'SELECT', 'SELECT', 'transaction', 'transaction', 'work'], 'named by the first keyword; SQL when there is none')
    const [, , missing, typeError, thrown] = finished
    t.equal(missing!.attributes['db.response.status_code'], '42P01', 'undefined_table')
    t.equal(typeError!.attributes['error.type'], 'TypeError')
    t.equal(typeError!.attributes['db.response.status_code'], undefined)
    t.equal(thrown!.attributes['error.type'], 'Error')
    await provider.shutdown()
  }),
)

interface Export {
  url: string
  headers: IncomingHttpHeaders
  body: { resourceSpans: { resource: { attributes: Attribute[] }; scopeSpans: { spans: { name: string; attributes: Attribute[] }[] }[] }[] }
}
interface Attribute {
  key: string
  value: { stringValue?: string }
}

t.test('to a collector: OTLP/HTTP JSON posted to <endpoint>/v1/traces, sent when the service stops', async (t) => {
  const exports: Export[] = []
  let arrived: () => void
  const first = new Promise<void>((resolve) => (arrived = resolve))
  const collector = createServer((request, response) => {
    let text = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (text += chunk))
    request.on('end', () => {
      exports.push({ url: request.url!, headers: request.headers, body: JSON.parse(text) as Export['body'] })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      arrived()
    })
  })
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => collector.close(() => resolve())))
  const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/`
  const app = await buildApp(testConfig({ tracing: { endpoint, serviceName: 'resourceful-otlp' } }))
  t.equal((await app.inject({ method: 'GET', url: '/livez', headers: { 'x-request-id': 'otlp-1' } })).statusCode, 200)
  await app.close()
  await first
  const [sent] = exports
  t.equal(sent!.url, '/v1/traces')
  t.equal(tracesUrl('https://otlp.example:4318/base'), 'https://otlp.example:4318/base/v1/traces', 'under the base path, with or without its slash')
  t.match(sent!.headers['content-type'], /^application\/json/)
  const [resourceSpans] = sent!.body.resourceSpans
  t.same(resourceSpans!.resource.attributes.find((a) => a.key === 'service.name')?.value, { stringValue: 'resourceful-otlp' })
  const span = resourceSpans!.scopeSpans.flatMap((scope) => scope.spans).find((s) => s.name === 'GET /livez')
  t.same(span?.attributes.find((a) => a.key === 'resourceful.request_id')?.value, { stringValue: 'otlp-1' })
})

// The uniform error body on every failure, and the status each kind of bad input gets (ERR-*, SEC-*).
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { eachDatabase, startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

function assertErrorBody(t: Test, res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  t.equal(res.status, status, `status ${status}`)
  t.equal(res.body?.error?.code, code, `code ${code}`)
  t.type(res.body.error.message, 'string')
  t.ok(Array.isArray(res.body.error.details), 'details is an array')
  t.match(res.headers.get('content-type'), /^application\/json/)
  t.equal(res.headers.get('cache-control'), 'no-store')
}

/** A raw request for methods and bytes fetch() refuses to send. */
function raw(api: Api, text: string): Promise<string> {
  const { port } = new URL(api.origin)
  return new Promise((resolve, reject) => {
    // Written, not ended: the server closes the connection (the requests say Connection: close).
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(text))
    let out = ''
    socket.on('data', (chunk) => (out += chunk))
    socket.on('end', () => resolve(out))
    socket.on('error', reject)
  })
}

t.test('unknown paths are 404 with the uniform JSON body, never an HTML page (RES-01, RES-02, ERR-01)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    for (const path of [`${V1}/widgets`, `${V1}/Products`, '/', '/api', `${V1}/products/x/y/z/w`, `${V1}/products/%zz`, `${V1}/wid%gets`]) {
      const res = await admin.get(path)
      assertErrorBody(t, res, 404, 'NOT_FOUND')
      t.ok(res.headers.get('x-request-id'), `${path}: X-Request-Id`)
      t.equal(res.headers.get('x-content-type-options'), 'nosniff')
    }
    assertErrorBody(t, await admin.delete(`${V1}/products/%E0%A4%A`), 404, 'NOT_FOUND')
  }),
)

t.test('a known path with another method is 405 with Allow; TRACE too; an unknown method is unreadable (EP-12)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const item = `${V1}/products/01890000-0000-7000-8000-000000000000`
    for (const [method, path, allow] of [
      ['PUT', `${V1}/products`, 'DELETE, GET, HEAD, OPTIONS, PATCH, POST'],
      ['PUT', `${V1}/webhooks/01890000-0000-7000-8000-000000000000/deliveries`, 'GET, HEAD, OPTIONS'],
      ['DELETE', `${V1}/events`, 'GET, HEAD, OPTIONS'],
      ['POST', item, 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT'],
    ] as const) {
      const res = await admin.request(method, path, method === 'DELETE' ? {} : { body: {} })
      assertErrorBody(t, res, 405, 'METHOD_NOT_ALLOWED')
      t.equal(res.headers.get('allow'), allow, `${method} ${path}`)
    }
    const trace = await raw(api, `TRACE ${V1}/products HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    t.match(trace, /^HTTP\/1\.1 405 /, 'TRACE is never handled')
    t.match(trace, /"code":"METHOD_NOT_ALLOWED"/)
    const unknown = await raw(api, `FOO ${V1}/products HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    t.match(unknown, /^HTTP\/1\.1 400 /, 'a method HTTP does not know is unreadable')
    t.match(unknown, /"code":"BAD_REQUEST"/)
    t.equal((await admin.get(`${V1}/products`)).status, 200, 'and the service goes on')
  }),
)

t.test('HEAD answers like GET without a body; OPTIONS lists the methods (EP-14, EP-15)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    for (const path of [`${V1}/products`, `${V1}/products/${created.body.id}`]) {
      const get = await admin.get(path)
      const head = await admin.request('HEAD', path)
      t.equal(head.status, 200)
      t.equal(head.text, '')
      for (const name of ['content-type', 'content-length', 'link', 'x-total-count', 'cache-control']) {
        t.equal(head.headers.get(name), get.headers.get(name), `${name} as on GET`)
      }
    }
    const collection = await admin.request('OPTIONS', `${V1}/products`)
    t.equal(collection.status, 204)
    t.equal(collection.headers.get('allow'), 'DELETE, GET, HEAD, OPTIONS, PATCH, POST')
    t.equal(collection.text, '')
    const item = await admin.request('OPTIONS', `${V1}/products/${created.body.id}`)
    t.equal(item.headers.get('allow'), 'DELETE, GET, HEAD, OPTIONS, PATCH, PUT')
    t.equal(item.headers.get('accept-patch'), 'application/merge-patch+json, application/json')
    assertErrorBody(t, await admin.request('OPTIONS', `${V1}/widgets`), 404, 'NOT_FOUND')
    const head404 = await admin.request('HEAD', `${V1}/products/nope`)
    t.equal(head404.status, 404, 'HEAD of a missing item: the GET status, no body')
    t.equal(head404.text, '')
  }),
)

t.test('unreadable bodies are 400 with a clear message (EP-27, ERR-04)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const broken = await admin.post(`${V1}/products`, '{"name": "Mug",')
    assertErrorBody(t, broken, 400, 'MALFORMED_JSON')
    t.match(broken.body.error.message, /^The request body is not valid JSON: /)
    t.notMatch(broken.body.error.message, /at .*\.js|node_modules/, 'no parser internals')
    assertErrorBody(t, await admin.post(`${V1}/products`, ''), 400, 'MALFORMED_JSON')
    assertErrorBody(t, await admin.request('POST', `${V1}/products`), 400, 'BAD_REQUEST')
    // Found by fuzzing: these two answered 422 with a nameless field.
    assertErrorBody(t, await admin.request('POST', `${V1}/tokens`), 400, 'BAD_REQUEST')
    assertErrorBody(t, await api.anonymous.request('POST', `${V1}/sessions`), 400, 'BAD_REQUEST')
    for (const body of ['"text"', '42', 'null', 'true']) {
      const res = await admin.post(`${V1}/products`, body)
      assertErrorBody(t, res, 400, 'BAD_REQUEST')
      t.equal(res.body.error.message, 'The request body must be a JSON object, or an array of them.', body)
    }
    // Only a collection's POST takes an array (of items to create).
    assertErrorBody(t, await admin.post(`${V1}/products`, '[]'), 422, 'VALIDATION_ERROR')
    for (const body of ['[]', '[{}]', '"text"']) {
      const res = await admin.patch(`${V1}/products/01890000-0000-7000-8000-000000000000`, body)
      assertErrorBody(t, res, 400, 'BAD_REQUEST')
      t.equal(res.body.error.message, 'The request body must be a JSON object.', body)
    }
    assertErrorBody(t, await admin.post(`${V1}/tokens`, '[{}]'), 400, 'BAD_REQUEST')
    t.equal((await admin.get(`${V1}/products`)).body.length, 0, 'nothing stored')
  }),
)

t.test('a body that is not JSON is 415 (EP-25, SEC-15)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml']) {
      assertErrorBody(t, await admin.post(`${V1}/products`, 'name=Mug', { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE')
    }
    const charset = await admin.post(`${V1}/products`, productBody(), { 'content-type': 'application/json; charset=utf-8' })
    t.equal(charset.status, 201, 'a charset parameter is fine')
    const upper = await admin.post(`${V1}/products`, productBody(), { 'content-type': 'Application/JSON; Charset="UTF-8"' })
    t.equal(upper.status, 201, 'media types and charsets are case-insensitive')
    const latin = await admin.post(`${V1}/products`, productBody(), { 'content-type': 'application/json; charset=iso-8859-1' })
    assertErrorBody(t, latin, 415, 'UNSUPPORTED_MEDIA_TYPE')
  }),
)

t.test('a body over 1 MiB is 413 and nothing is stored (LIM-02)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const res = await admin.post(`${V1}/products`, productBody({ description: 'x'.repeat(1024 * 1024) }))
    assertErrorBody(t, res, 413, 'PAYLOAD_TOO_LARGE')
    t.equal((await admin.get(`${V1}/products`)).body.length, 0)
  }),
)

t.test('a body still arriving after REQUEST_TIMEOUT_MS is 408 and the connection closes; the client was slow, not the service (LIM-08)', async (t) => {
  const limits = { requestTimeoutMs: 200, shutdownGraceMs: 0, rateLimit: { anonymous: 0, authenticated: 0, exempt: [] }, bulkMaxItems: 1000, batchMaxOperations: 100 }
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { limits } })
  const answer = await raw(api, `POST ${V1}/products HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":`)
  t.match(answer, /^HTTP\/1\.1 408 /)
  t.match(answer, /\r\nconnection: close\r\n/i)
  t.match(answer, /"code":"REQUEST_TIMEOUT"/)
  t.equal((await api.admin.get(`${V1}/products`)).body.length, 0, 'nothing stored')
})

t.test('validation: 422 listing every failing field with a path and a reason (ERR-03, SEC-05, SEC-09)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const res = await admin.post(`${V1}/products`, {
      name: { $ne: null },
      sku: 'lower-case',
      price: 1.234,
      stock: 2 ** 60,
      status: 'sold',
      tags: ['ok', 7, 'ok'],
      colour: 'red',
    })
    assertErrorBody(t, res, 422, 'VALIDATION_ERROR')
    t.same(res.body.error.details, [
      { field: 'colour', reason: 'is not a known field' },
      { field: 'name', reason: 'must be a string' },
      { field: 'sku', reason: 'must match pattern "^[A-Z0-9-]{3,32}$"' },
      { field: 'price', reason: 'must have at most 2 decimal places' },
      { field: 'stock', reason: 'must be <= 2147483647' },
      { field: 'status', reason: 'must be one of draft, active, archived' },
      { field: 'tags[1]', reason: 'must be a string' },
      { field: 'tags', reason: 'must NOT have duplicate items (items ## 2 and 0 are identical)' },
    ])
    const infinite = await admin.post(`${V1}/products`, '{"name":"x","sku":"ABC","price":1e400}')
    assertErrorBody(t, infinite, 422, 'VALIDATION_ERROR')
    t.same(infinite.body.error.details.map((d: { field: string }) => d.field), ['price'], '1e400 is not a number we store')
    const missing = await admin.post(`${V1}/products`, {})
    t.same(missing.body.error.details.map((d: { field: string }) => d.field), ['name', 'sku', 'price'])
    t.ok(missing.body.error.details.every((d: { reason: string }) => d.reason === 'is required'))
    // A body can break thousands of rules; its error lists the first 100, not a body larger than the request.
    const many = await admin.post(`${V1}/products`, Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`field${i}`, i])))
    assertErrorBody(t, many, 422, 'VALIDATION_ERROR')
    t.equal(many.body.error.details.length, 100, 'the first 100 details')
    t.same(many.body.error.details.slice(0, 2), [{ field: 'name', reason: 'is required' }, { field: 'sku', reason: 'is required' }])
  }),
)

t.test('ids and timestamps in a body are at most their longest form: a uuid 36 characters, a date-time 35 (OWASP API4)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const product = (await admin.post(`${V1}/products`, productBody({ status: 'active' }))).body
    const order = (await admin.post(`${V1}/orders`, {})).body
    // Ajv's `uuid` takes a URN too, which PostgreSQL does not: a 500 before the bound.
    const urn = await admin.post(`${V1}/orders/${order.id}/items`, { product_id: `urn:uuid:${product.id}`, quantity: 1 })
    assertErrorBody(t, urn, 422, 'VALIDATION_ERROR')
    t.same(urn.body.error.details.map((d: { field: string }) => d.field), ['product_id'])
    // A PUT may send back the read-only updated_at (and it is ignored): nanoseconds and an offset fit, more does not.
    const path = `${V1}/products/${product.id}`
    const put = (updated_at: string) => admin.put(path, { ...productBody({ sku: product.sku, status: 'active' }), updated_at })
    t.equal((await put('2026-01-31T12:00:00.123456789+05:30')).status, 200, 'a 35-character date-time')
    const long = await put('2026-01-31T12:00:00.1234567890+05:30')
    assertErrorBody(t, long, 422, 'VALIDATION_ERROR')
    t.same(long.body.error.details.map((d: { field: string }) => d.field), ['updated_at'])
  }),
)

t.test('text the database cannot store, not Unicode, or with a key twice is refused (SEC-03, SEC-04, RFC 8259 §4, §8)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    for (const name of ['a\\u0000b', 'a\\ud800b', 'a\\udc00']) {
      const res = await admin.post(`${V1}/products`, `{"name":"${name}","sku":"TXT-1","price":1}`)
      assertErrorBody(t, res, 400, 'MALFORMED_JSON')
    }
    const bytes = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('","sku":"TXT-2","price":1}')])
    const invalid = await fetch(api.origin + `${V1}/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes })
    t.equal(invalid.status, 400, 'invalid UTF-8 is not silently replaced')
    const twice = await admin.post(`${V1}/products`, '{"name":"a","sku":"TXT-4","price":1,"name":"b"}')
    assertErrorBody(t, twice, 400, 'MALFORMED_JSON')
    t.equal(twice.body.error.message, 'The request body gives the key "name" twice.', 'a duplicate key is not silently resolved (SEC-03)')
    const paired = await admin.post(`${V1}/products`, '{"name":"smile \\ud83d\\ude00","sku":"TXT-3","price":1}')
    t.equal(paired.status, 201, 'a surrogate pair is an ordinary character')
    t.equal(paired.body.name, 'smile \u{1F600}')
    t.equal((await admin.get(`${V1}/products`)).body.length, 1, 'only that one was stored')
  }),
)

t.test('prototype keys never reach a prototype (SEC-01, SEC-02)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V1}/products`, productBody())
    for (const body of [
      '{"__proto__":{"is_admin":true},"name":"x","sku":"ABC","price":1}',
      '{"constructor":{"prototype":{"is_admin":true}},"name":"x","sku":"ABD","price":1}',
      '{"prototype":{"is_admin":true},"name":"x","sku":"ABE","price":1}',
    ]) {
      const res = await admin.post(`${V1}/products`, body)
      assertErrorBody(t, res, 422, 'VALIDATION_ERROR')
      t.equal(res.body.error.details[0].reason, 'is not a known field')
      const patched = await admin.patch(`${V1}/products/${created.body.id}`, body.replace(/"name".*/, '"stock":1}'))
      t.equal(patched.status, 422, 'in a merge patch too')
    }
    t.equal(({} as Record<string, unknown>).is_admin, undefined, 'Object.prototype is untouched')
    t.same((await admin.get(`${V1}/products/${created.body.id}`)).body, created.body)
  }),
)

t.test('nesting beyond 64 levels is 400, whatever the body holds, and the service goes on (SEC-06, LIM-09)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const deep = `{"name":"x","sku":"ABC","price":1,"tags":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
    const res = await admin.post(`${V1}/products`, deep)
    assertErrorBody(t, res, 400, 'MALFORMED_JSON')
    t.equal(res.body.error.message, 'The request body is nested deeper than 64 levels.')
    // Found from outside: a NUL or a lone surrogate at the bottom made the storable-text walk
    // overflow the stack (a 500), before authentication.
    for (const text of ['\\u0000', '\\ud800']) {
      const body = `${'{"a":'.repeat(10_000)}"${text}"${'}'.repeat(10_000)}`
      assertErrorBody(t, await api.anonymous.post(`${V1}/products`, body), 400, 'MALFORMED_JSON')
      assertErrorBody(t, await api.anonymous.post(`${V1}/sessions`, body), 400, 'MALFORMED_JSON')
    }
    const justDeepEnough = `{"name":"x","sku":"ABC","price":1,"tags":${'['.repeat(63)}${']'.repeat(63)}}`
    t.equal((await admin.post(`${V1}/products`, justDeepEnough)).status, 422, '64 levels are read (and then validated)')
    t.equal((await admin.get(`${V1}/products`)).status, 200)
  }),
)

t.test('every response carries X-Request-Id and the security headers (ERR-07, CACHE-20)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const generated = await admin.get(`${V1}/products`)
    t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
    const given = await admin.get(`${V1}/nothing`, { 'x-request-id': 'client-id.42' })
    t.equal(given.headers.get('x-request-id'), 'client-id.42', "a sane client id is kept, errors included")
    const insane = await admin.get(`${V1}/products`, { 'x-request-id': 'a b\tc' })
    t.match(insane.headers.get('x-request-id'), /^[0-9a-f-]{36}$/, 'an unsafe one is replaced')
    for (const res of [generated, given]) {
      t.equal(res.headers.get('x-content-type-options'), 'nosniff')
      t.equal(res.headers.get('content-security-policy'), "frame-ancestors 'none'")
      t.equal(res.headers.get('x-powered-by'), null)
      t.ok(res.headers.get('date'))
    }
  }),
)

t.test('a 500 shows no stack, SQL or library name; the log has it with the request id (ERR-07)', async (t) => {
  const lines: string[] = []
  const api = await startApi(t, databaseKinds()[0]!, (app) => {
    app.get('/boom', async () => {
      throw new Error('SELECT secret FROM internals at /srv/app/node_modules/x.js:1')
    })
  })
  // The log stream is attached after start so the test can read the line the failure writes.
  api.app.log.error = ((obj: { err?: Error }, msg: string) => void lines.push(JSON.stringify({ ...obj, msg, err: obj.err?.message }))) as never
  const res = await new Promise<{ status: number; body: string; id: string }>((resolve) => {
    httpRequest(`${api.origin}/boom`, { headers: { 'x-request-id': 'req-500' } }, (response) => {
      let body = ''
      response.on('data', (c) => (body += c))
      response.on('end', () => resolve({ status: response.statusCode!, body, id: String(response.headers['x-request-id']) }))
    }).end()
  })
  t.equal(res.status, 500)
  t.same(JSON.parse(res.body), { error: { code: 'INTERNAL_ERROR', message: 'An unexpected error occurred.', details: [] } })
  t.equal(res.id, 'req-500')
  t.ok(lines.some((line) => line.includes('SELECT secret')), 'the cause is logged')
})

t.test('a database that cannot be reached is 503 with Retry-After (ERR-08)', async (t) => {
  const app = await buildApp(testConfig({ database: { kind: 'postgres', url: 'postgresql://postgres@127.0.0.1:1/none' }, migrateOnStart: false }))
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'GET', url: `${V1}/products` })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
  t.equal(res.json().error.code, 'SERVICE_UNAVAILABLE')
})

t.test('order of checks: an unknown item or parent is 404 before an invalid body is 422; unreadable JSON is 400 first', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const missing = `${V1}/products/01890000-0000-7000-8000-000000000000`
    assertErrorBody(t, await admin.patch(missing, { price: -1 }), 404, 'NOT_FOUND')
    assertErrorBody(t, await admin.put(missing, { name: '' }), 404, 'NOT_FOUND')
    assertErrorBody(t, await admin.put(`${V1}/products/nope`, { name: '' }), 404, 'NOT_FOUND')
    assertErrorBody(t, await admin.post(`${missing}/reviews`, { rating: 9 }), 404, 'NOT_FOUND')
    assertErrorBody(t, await admin.patch(missing, '{broken'), 400, 'MALFORMED_JSON')
    assertErrorBody(t, await admin.post(`${V1}/widgets`, '{broken'), 404, 'NOT_FOUND')
    assertErrorBody(t, await admin.put(`${V1}/products`, 'x', { 'content-type': 'text/plain' }), 405, 'METHOD_NOT_ALLOWED')
    assertErrorBody(t, await admin.request('PATCH', missing), 400, 'BAD_REQUEST')
  }),
)

t.test('content sent with GET or DELETE is ignored; merge patches are for PATCH only (EP-10, EP-17)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const a = await admin.post(`${V1}/products`, productBody())
    const b = await admin.post(`${V1}/products`, productBody())
    const body = '{"sku": "nothing"}'
    const list = await raw(api, `GET ${V1}/products HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`)
    t.match(list, /^HTTP\/1\.1 200 /)
    t.match(list, /\r\nx-total-count: 2\r\n/, 'a GET body never filters')
    t.equal((await admin.request('DELETE', `${V1}/products/${a.body.id}`, { headers: { 'content-type': 'application/json' } })).status, 204)
    t.equal((await admin.request('DELETE', `${V1}/products/${b.body.id}`, { body: 'whatever', headers: { 'content-type': 'text/plain' } })).status, 204)
    // Found by the fuzz test: a Content-Type that is no media type was a 415 the document does not list.
    for (const type of ['whatever', '', '/json', 'text/']) {
      const c = await admin.post(`${V1}/products`, productBody())
      const deleted = await admin.request('DELETE', `${V1}/products/${c.body.id}`, { body: 'whatever', headers: { 'content-type': type } })
      t.equal(deleted.status, 204, `DELETE with Content-Type ${JSON.stringify(type)}: its content ignored`)
    }
    const merge = { 'content-type': 'application/merge-patch+json' }
    const post = await admin.post(`${V1}/products`, productBody(), merge)
    assertErrorBody(t, post, 415, 'UNSUPPORTED_MEDIA_TYPE')
    t.equal(post.body.error.message, 'Send the body as application/json, or to import items as text/csv or application/x-ndjson (UTF-8).')
    const patch = await admin.patch(`${V1}/products/${a.body.id}`, 'name=x', { 'content-type': 'text/plain' })
    assertErrorBody(t, patch, 415, 'UNSUPPORTED_MEDIA_TYPE')
    t.equal(patch.body.error.message, 'Send the body as application/merge-patch+json or application/json.')
    const jsonPatch = await admin.patch(`${V1}/products/${a.body.id}`, '[]', { 'content-type': 'application/json-patch+json' })
    assertErrorBody(t, jsonPatch, 415, 'UNSUPPORTED_MEDIA_TYPE')
    t.equal(jsonPatch.headers.get('accept-patch'), 'application/merge-patch+json, application/json', 'RFC 5789 §2.2: Accept-Patch')
  }),
)

// Answers Node's HTTP server makes before Fastify routes a request (parse errors, oversized
// targets and headers, timeouts, Expect, a missing Host, CONNECT): the uniform error body and the
// headers every response has, over raw sockets since fetch() cannot send these requests.
import { connect, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { MAX_TARGET_LENGTH } from '../../src/http/error-handler.js'
import { HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/http/server-factory.js'
import { startApi, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

interface RawAnswer {
  statusLine: string
  headers: Map<string, string>
  body: string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/

function parse(bytes: Buffer): RawAnswer {
  const end = bytes.indexOf('\r\n\r\n')
  const [statusLine = '', ...fields] = bytes.subarray(0, end).toString('latin1').split('\r\n')
  const headers = new Map(fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()] as const))
  return { statusLine, headers, body: bytes.subarray(end + 4).toString('utf8') }
}

/** Reads `socket` until the server closes the connection. */
function answerOn(socket: Socket): Promise<RawAnswer> {
  const chunks: Buffer[] = []
  return new Promise((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('end', () => resolve(parse(Buffer.concat(chunks))))
    socket.on('error', reject)
  })
}

/** Writes `text` in one write and reads until the server closes the connection. */
function raw(api: Api, text: string): Promise<RawAnswer> {
  const { port } = new URL(api.origin)
  const socket = connect(Number(port), '127.0.0.1', () => socket.write(text))
  return answerOn(socket)
}

/** The security headers an ordinary response (to the admin) carries: raw answers must carry the same. */
async function securityHeaders(api: Api): Promise<Record<string, string | null>> {
  const { headers } = await api.admin.get(`${V1}/products`)
  return Object.fromEntries(['x-content-type-options', 'content-security-policy', 'referrer-policy'].map((name) => [name, headers.get(name)]))
}

async function assertUniform(t: Test, api: Api, res: RawAnswer, status: number, code: string): Promise<void> {
  t.match(res.statusLine, new RegExp(`^HTTP/1\\.1 ${status} \\w`), `status line ${status}`)
  t.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  t.equal(res.headers.get('cache-control'), 'no-store')
  for (const [name, value] of Object.entries(await securityHeaders(api))) {
    t.ok(value, `an ordinary response has ${name}`)
    t.equal(res.headers.get(name), value, name)
  }
  t.match(res.headers.get('x-request-id'), UUID, 'a new request id')
  t.match(res.headers.get('date'), IMF_FIXDATE, 'Date (RFC 9110 §5.6.7)')
  t.equal(res.headers.get('connection'), 'close')
  t.equal(res.headers.get('content-length'), String(Buffer.byteLength(res.body)))
  const body = JSON.parse(res.body)
  t.equal(body.error.code, code, `code ${code}`)
  t.type(body.error.message, 'string')
  t.same(body.error.details, [])
  t.equal((await api.admin.get(`${V1}/products`)).status, 200, 'the service goes on serving')
}

const request = (target: string, headers = 'Host: x\r\n') => `GET ${target} HTTP/1.1\r\n${headers}Connection: close\r\n\r\n`

t.test('answers below routing', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!)

  t.test('an Expect other than 100-continue is 417 (RFC 9110 §10.1.1)', async (t) => {
    const res = await raw(api, request(`${V1}/products`, 'Host: x\r\nExpect: garbage\r\n'))
    await assertUniform(t, api, res, 417, 'EXPECTATION_FAILED')
    const post = await raw(api, `POST ${V1}/products HTTP/1.1\r\nHost: x\r\nExpect: 101-upgrade\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`)
    await assertUniform(t, api, post, 417, 'EXPECTATION_FAILED')
    const named = await raw(api, request(`${V1}/products`, 'Host: x\r\nExpect: garbage\r\nX-Request-Id: client-id-1\r\n'))
    t.equal(named.headers.get('x-request-id'), 'client-id-1', 'there is a request here: its sane id is echoed, as on any response')
  })

  t.test('Expect: 100-continue still gets 100 Continue, then the answer to the request', async (t) => {
    const { port } = new URL(api.origin)
    const { token } = await api.newUser({ roles: ['admin'] })
    const body = JSON.stringify(productBody())
    const head = `POST ${V1}/products HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`
    const out = await new Promise<string>((resolve, reject) => {
      // The body goes only after the interim response: the exchange the client asked for.
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(head))
      let text = ''
      socket.on('data', (chunk) => {
        const sent = text.includes('100 Continue')
        text += chunk.toString('latin1')
        if (!sent && text.includes('100 Continue')) socket.write(body)
      })
      socket.on('end', () => resolve(text))
      socket.on('error', reject)
    })
    t.match(out, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 201 /)
  })

  t.test('an HTTP/1.1 request without Host is 400 (RFC 9112 §3.2); HTTP/1.0 needs none', async (t) => {
    const res = await raw(api, request(`${V1}/products`, ''))
    await assertUniform(t, api, res, 400, 'BAD_REQUEST')
    t.match(JSON.parse(res.body).error.message, /Host header is missing/)
    const withExpect = await raw(api, request(`${V1}/products`, 'Expect: garbage\r\n'))
    t.match(withExpect.statusLine, /^HTTP\/1\.1 400 /, 'the missing Host is named first')
    const old = await raw(api, `GET ${V1}/products HTTP/1.0\r\n\r\n`)
    t.match(old.statusLine, /^HTTP\/1\.1 200 /, 'HTTP/1.0 without Host')
    t.ok(Array.isArray(JSON.parse(old.body)), 'the list')
  })

  t.test('a target over 8 KiB is 414 (RFC 9110 §15.5.15), huge headers with a shorter one 431', async (t) => {
    const path = (length: number) => `/${'a'.repeat(length - 1)}`
    const longest = await raw(api, request(path(MAX_TARGET_LENGTH)))
    t.match(longest.statusLine, /^HTTP\/1\.1 404 /, 'a target of 8 KiB is routed')
    await assertUniform(t, api, await raw(api, request(path(MAX_TARGET_LENGTH + 1))), 414, 'URI_TOO_LONG')
    const query = `${V1}/products?q=${'x'.repeat(12_000)}`
    await assertUniform(t, api, await raw(api, request(query)), 414, 'URI_TOO_LONG')
    // Past Node's 16 KiB header limit: the parser rejects it, and the request line is the cause.
    await assertUniform(t, api, await raw(api, request(`${V1}/products?q=${'x'.repeat(16 * 1024)}`)), 414, 'URI_TOO_LONG')
    const bigHeader = `Host: x\r\nX-Padding: ${'b'.repeat(20_000)}\r\n`
    await assertUniform(t, api, await raw(api, request(path(MAX_TARGET_LENGTH + 1), bigHeader)), 414, 'URI_TOO_LONG')
    await assertUniform(t, api, await raw(api, request(path(MAX_TARGET_LENGTH), bigHeader)), 431, 'HEADERS_TOO_LARGE')
    await assertUniform(t, api, await raw(api, request(`${V1}/products`, bigHeader)), 431, 'HEADERS_TOO_LARGE')
  })

  t.test('a request HTTP cannot parse is 400', async (t) => {
    await assertUniform(t, api, await raw(api, request(`${V1}/products`, 'Host: x\r\nNot a header\r\n')), 400, 'BAD_REQUEST')
    await assertUniform(t, api, await raw(api, 'GET /\x01 HTTP/1.1\r\nHost: x\r\n\r\n'), 400, 'BAD_REQUEST')
  })

  t.test('CONNECT is 501: this service is not a proxy (RFC 9110 §9.3.6)', async (t) => {
    const res = await raw(api, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    await assertUniform(t, api, res, 501, 'NOT_IMPLEMENTED')
    t.match(JSON.parse(res.body).error.message, /not a proxy/)
  })

  t.test('a client too slow to send its request is 408 (RFC 9110 §15.5.9)', async (t) => {
    const server = api.app.server
    t.equal(server.headersTimeout, HEADERS_TIMEOUT_MS, 'headers within 30 s')
    t.equal(server.requestTimeout, REQUEST_TIMEOUT_MS, 'the whole request within 60 s')
    t.equal(HEADERS_TIMEOUT_MS, 30_000)
    t.equal(REQUEST_TIMEOUT_MS, 60_000)
    // Node's expiry check runs every 30 s; rather than wait for it, give the server's clientError
    // listener what that check gives it: ERR_HTTP_REQUEST_TIMEOUT on a connection with half a request.
    const { port } = new URL(api.origin)
    const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve))
    const socket = connect(Number(port), '127.0.0.1', () => socket.write(`GET ${V1}/products HTTP/1.1\r\nHost: x\r\n`))
    const answer = answerOn(socket)
    const timeout = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' })
    server.emit('clientError', timeout, await accepted)
    await assertUniform(t, api, await answer, 408, 'REQUEST_TIMEOUT')
  })
})

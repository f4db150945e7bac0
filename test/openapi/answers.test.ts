// Every answer of a test's service is held to its OpenAPI document on the server side
// (test/helpers/contract.ts checkAnswers, installed by startApi): an answer the document does not
// describe is reported whoever asked for it (the test client, fetch, app.inject, an event stream).
// Here the service is made to answer wrongly on request, and each wrong answer must be reported.
import t, { type Test } from 'tap'
import { startApi, V1 } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

/** What a request's `x-test-fault` header makes the service do wrong, after the service made its answer. */
const FAULTS: Record<string, { status?: number; drop?: string; set?: [string, string]; payload?: string }> = {
  status: { status: 202 },
  header: { drop: 'etag' },
  'header-value': { set: ['x-total-count', 'many'] },
  body: { payload: JSON.stringify([{ id: 1 }]) },
  'not-json': { payload: '{"id":' },
  empty: { payload: '' },
}

/** One problem, and what it says. */
const reportsOne = (t: Test, problems: string[], pattern: RegExp | string) => {
  t.equal(problems.length, 1, `one problem: ${problems.join('; ')}`)
  t.match(problems[0], pattern)
}

t.test('a wrong answer is reported, whoever asked for it', async (t) => {
  const problems: string[] = []
  const api = await startApi(t, databaseKinds()[0]!, (app) => {
    app.addHook('onSend', (request, reply, payload, done) => {
      const fault = FAULTS[String(request.headers['x-test-fault'])]
      if (fault?.status) reply.code(fault.status)
      if (fault?.drop) reply.removeHeader(fault.drop)
      if (fault?.set) reply.header(...fault.set)
      done(null, fault?.payload ?? payload)
    })
    // An event stream writes its head itself (events/stream.ts): it answers 203 instead.
    app.addHook('onRequest', (request, reply, done) => {
      if (request.headers['x-test-fault'] === 'stream') {
        const writeHead = reply.raw.writeHead.bind(reply.raw) as (...args: unknown[]) => typeof reply.raw
        reply.raw.writeHead = ((_status: number, ...rest: unknown[]) => writeHead(203, ...rest)) as typeof reply.raw.writeHead
      }
      done()
    })
    // A test's own route is in no document, and is not checked.
    app.get('/api/v2/test-only', async () => ({ ok: true }))
  }, { onContractProblem: (problem) => void problems.push(problem) })
  const reported = async (send: () => Promise<unknown>) => {
    problems.length = 0
    await send()
    return [...problems]
  }
  const product = (await api.admin.post('/api/v2/products', productBody({ price: { amount: 3 } }))).body.id as string
  const fault = (name: string) => ({ 'x-test-fault': name })

  t.test('answers as the document says: nothing reported', async (t) => {
    t.same(await reported(() => api.anonymous.get('/api/v2/products')), [])
    t.same(await reported(() => fetch(`${api.origin}/api/v2/products/${product}`)), [])
    t.same(await reported(() => api.app.inject({ url: `/api/v2/products/${product}` })), [])
    t.same(await reported(() => fetch(`${api.origin}/api/v2/test-only`)), [], 'a route the test added')
  })

  t.test('through the test client', async (t) => {
    reportsOne(t, await reported(() => api.anonymous.get('/api/v2/products', fault('status'))), /^GET \/api\/v2\/products → 202: status 202 is not documented/)
  })

  t.test('through fetch', async (t) => {
    reportsOne(t, await reported(() => fetch(`${api.origin}/api/v2/products/${product}`, { headers: fault('header') })), /→ 200: header ETag is missing/)
    reportsOne(t, await reported(() => fetch(`${api.origin}/api/v2/products`, { headers: fault('body') })), /→ 200: body body\/0 must have required property/)
    reportsOne(t, await reported(() => fetch(`${api.origin}/api/v2/products`, { headers: fault('not-json') })), /→ 200: a JSON content type on a body that is not JSON/)
    reportsOne(t, await reported(() => fetch(`${api.origin}/api/v2/products`, { headers: fault('empty') })), /→ 200: an empty body, where the document has application\/json/)
    reportsOne(t, await reported(() => fetch(`${api.origin}/api/v2/products`, { headers: fault('header-value') })), /→ 200: header X-Total-Count "many" is not as its schema says/)
  })

  t.test('through app.inject', async (t) => {
    reportsOne(t, await reported(() => api.app.inject({ url: `/api/v2/products/${product}`, headers: fault('header') })), /→ 200: header ETag is missing/)
  })

  t.test('a version named in Accept, on an unversioned path: held to that version\'s document', async (t) => {
    const accept = 'application/vnd.resourceful.v1+json'
    reportsOne(t, await reported(() => fetch(`${api.origin}/api/products`, { headers: { accept, ...fault('status') } })), `GET ${V1}/products → 202: status 202 is not documented`)
  })

  t.test('an event stream: its status and headers', async (t) => {
    const { token } = await api.newUser({ roles: ['admin'] })
    const stream = new AbortController()
    const found = await reported(async () => {
      const headers = { accept: 'text/event-stream', authorization: `Bearer ${token}`, ...fault('stream') }
      const answer = await fetch(`${api.origin}/api/v2/events`, { headers, signal: stream.signal })
      t.equal(answer.status, 203)
      stream.abort()
    })
    reportsOne(t, found, /^GET \/api\/v2\/events → 203: status 203 is not documented/)
  })
})

// CORS over HTTP (WHATWG Fetch, "CORS protocol"): checklist CORS-01 to CORS-11. A real browser
// proves the same in test/browser/cors.test.ts.
import t from 'tap'
import { startApi, V1 } from '../helpers/api.js'

const NO_ID = '01890000-0000-7000-8000-000000000000'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const ALLOWED = 'http://shop.test:5173'
const corsHeaders = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'))

t.test('CORS for the origins in CORS_ORIGINS', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { corsOrigins: [ALLOWED, 'https://admin.test'] } })
  const admin = api.admin
  const created = await admin.post(`${V1}/products`, productBody())
  const item = `${V1}/products/${created.body.id as string}`

  t.test('an allowed origin is echoed, with credentials and the exposed headers (CORS-01, 03, 08)', async (t) => {
    const res = await admin.get(`${V1}/products`, { origin: ALLOWED })
    t.equal(res.headers.get('access-control-allow-origin'), ALLOWED, 'that exact origin, never *')
    t.equal(res.headers.get('access-control-allow-credentials'), 'true')
    t.match(res.headers.get('vary'), /Origin/)
    const exposed = res.headers.get('access-control-expose-headers')!.split(', ')
    for (const name of ['ETag', 'Last-Modified', 'Location', 'Content-Location', 'Link', 'X-Total-Count', 'X-Request-Id', 'Retry-After', 'Deprecation', 'Sunset', 'RateLimit', 'RateLimit-Policy', 'Idempotent-Replayed']) {
      t.ok(exposed.includes(name), `exposes ${name}`)
    }
    t.equal((await admin.get(item, { origin: 'https://admin.test' })).headers.get('access-control-allow-origin'), 'https://admin.test')
  })

  t.test('any other origin gets no CORS header, and Vary: Origin (CORS-02, 04)', async (t) => {
    for (const origin of ['http://evil.test', 'null', `${ALLOWED}/`, 'http://shop.test', 'HTTP://SHOP.TEST:5173']) {
      const res = await admin.get(item, { origin })
      t.same(corsHeaders(res.headers), [], `Origin: ${origin}`)
      t.match(res.headers.get('vary'), /Origin/)
    }
    const plain = await admin.get(item)
    t.same(corsHeaders(plain.headers), [], 'no Origin, no CORS headers')
    t.match(plain.headers.get('vary'), /Origin/, 'no Origin: still Vary: Origin, for caches')
  })

  t.test('a preflight: 204 with the methods of that path, the headers, Max-Age (CORS-05, 06, 07, 10)', async (t) => {
    const preflight = (path: string, method: string, origin = ALLOWED) =>
      admin.request('OPTIONS', path, {
        headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'content-type, authorization, if-match' },
      })
    const res = await preflight(item, 'PATCH')
    t.equal(res.status, 204)
    t.equal(res.text, '')
    t.equal(res.headers.get('access-control-allow-origin'), ALLOWED)
    t.match(res.headers.get('access-control-allow-methods'), /\bPATCH\b/)
    const allowed = res.headers.get('access-control-allow-headers')!.toLowerCase().split(', ')
    for (const name of ['content-type', 'authorization', 'if-match', 'if-none-match']) t.ok(allowed.includes(name), `allows ${name}`)
    t.ok(Number(res.headers.get('access-control-max-age')) > 0)
    const collection = await preflight(`${V1}/products/${NO_ID}/reviews/${NO_ID}`, 'POST')
    t.notMatch(collection.headers.get('access-control-allow-methods'), /POST/, 'a method the path lacks is not offered')
    t.match(collection.headers.get('access-control-allow-methods'), /\bPATCH\b/)
    const unversioned = await preflight(item.replace(V1, '/api'), 'PATCH')
    t.match(unversioned.headers.get('access-control-allow-methods'), /\bPATCH\b/, 'an unversioned path offers the current version\'s methods')
    const evil = await preflight(item, 'PATCH', 'http://evil.test')
    t.same(corsHeaders(evil.headers), [], 'a disallowed origin is not preflighted')
    t.equal(evil.headers.get('allow') !== null, true, 'it gets the plain OPTIONS answer')
  })

  t.test('an OPTIONS that is no preflight still answers Allow', async (t) => {
    const res = await admin.request('OPTIONS', item, { headers: { origin: ALLOWED } })
    t.equal(res.status, 204)
    t.match(res.headers.get('allow'), /PATCH/)
    t.equal(res.headers.get('access-control-allow-origin'), ALLOWED)
    for (const name of ['access-control-allow-methods', 'access-control-allow-headers', 'access-control-max-age']) t.equal(res.headers.get(name), null, `no ${name}`)
  })

  t.test('errors carry CORS headers too, so scripts can read them (CORS-09)', async (t) => {
    const redirect = await fetch(`${api.origin}${item}/`, { headers: { origin: ALLOWED }, redirect: 'manual' })
    t.equal(redirect.status, 301)
    t.equal(redirect.headers.get('access-control-allow-origin'), ALLOWED, 'and redirects')
    for (const res of [
      await admin.post(`${V1}/products/`, productBody(), { origin: ALLOWED }),
      await admin.get(`${V1}/products/nope`, { origin: ALLOWED }),
      await admin.request('POST', item, { headers: { origin: ALLOWED } }),
      await admin.patch(item, { price: -1 }, { origin: ALLOWED }),
      await admin.patch(item, { price: 1 }, { origin: ALLOWED, 'if-match': '"stale"' }),
    ]) {
      t.ok(res.status >= 400)
      t.equal(res.headers.get('access-control-allow-origin'), ALLOWED, `${res.status}`)
    }
  })
})

t.test('without CORS_ORIGINS no origin is allowed', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!)
  const res = await api.admin.get(`${V1}/products`, { origin: 'http://localhost:5173' })
  t.equal(res.status, 200)
  t.same(corsHeaders(res.headers), [])
})

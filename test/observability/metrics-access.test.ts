// GET /metrics is operational, not API: in no OpenAPI document, answered while starting, never
// rate-limited, with the headers every answer has; behind METRICS_TOKEN when it is set, refused
// with the uniform error body.
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { bearer, startApi, testConfig, V1 } from '../helpers/api.js'

const TOKEN = 'a-metrics-token-of-32-characters'

t.test('operational, not API: in no OpenAPI document, and the headers every answer has', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { corsOrigins: ['https://shop.example'] } })
  for (const version of api.app.openapi.keys()) {
    const document = await api.get(`/api/v${version}/openapi.json`)
    t.equal(document.status, 200)
    t.notOk(Object.keys(document.body.paths).some((path) => path.includes('metrics')), `v${version}: no /metrics`)
  }
  const scrape = await api.get('/metrics', { origin: 'https://shop.example', 'x-request-id': 'scrape-1' })
  t.equal(scrape.status, 200)
  t.equal(scrape.headers.get('x-request-id'), 'scrape-1')
  t.equal(scrape.headers.get('x-content-type-options'), 'nosniff')
  t.equal(scrape.headers.get('content-security-policy'), "frame-ancestors 'none'")
  t.equal(scrape.headers.get('cache-control'), 'no-store')
  t.equal(scrape.headers.get('access-control-allow-origin'), 'https://shop.example', 'CORS as on every path')
  t.equal((await api.request('POST', '/metrics')).status, 405, 'read-only')
})

t.test('scrapes are not rate-limited and use up no quota: they carry no RateLimit fields', async (t) => {
  const limits = { requestTimeoutMs: 10_000, shutdownGraceMs: 10_000, rateLimit: { anonymous: 1, authenticated: 1, exempt: [] }, bulkMaxItems: 1000, batchMaxOperations: 100 }
  const api = await startApi(t, 'pglite', undefined, { config: { limits } })
  for (let i = 0; i < 3; i++) {
    const scrape = await api.get('/metrics')
    t.equal(scrape.status, 200)
    t.equal(scrape.headers.get('ratelimit'), null)
  }
  const first = await api.get(`${V1}/products`)
  t.equal(first.status, 200, "the address's quota of 1 is untouched by the scrapes")
  t.match(first.headers.get('ratelimit'), /^"default";r=0;t=\d+$/)
  t.equal((await api.get(`${V1}/products`)).status, 429, 'then the API is limited')
  t.equal((await api.get('/metrics')).status, 200, 'and the scrapes are not')
})

t.test('while the service starts (migrations running), /metrics answers; the API is 503', async (t) => {
  const app = await buildApp(testConfig(), { start: 'later' })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'GET', url: '/metrics' })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: `${V1}/products` })).statusCode, 503)
})

t.test('METRICS_TOKEN: a scrape without it is 401 with the uniform error body; API credentials are not it', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { metricsToken: TOKEN } })
  const admin = await api.newUser({ roles: ['admin'] })
  const refusals: [string, Record<string, string>, string][] = [
    ['no credentials', {}, 'Bearer realm="metrics"'],
    ['another scheme', { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` }, 'Bearer realm="metrics"'],
    ['a bearer and more', { authorization: `Bearer ${TOKEN} extra` }, 'Bearer realm="metrics"'],
    ['another token', bearer('a-metrics-token-of-32-characterZ'), 'Bearer realm="metrics", error="invalid_token"'],
    ['a prefix of it', bearer(TOKEN.slice(0, 20)), 'Bearer realm="metrics", error="invalid_token"'],
    ["an admin's API token", bearer(admin.token), 'Bearer realm="metrics", error="invalid_token"'],
  ]
  for (const [what, headers, challenge] of refusals) {
    const refused = await api.request('GET', '/metrics', { headers })
    t.equal(refused.status, 401, what)
    t.equal(refused.headers.get('www-authenticate'), challenge, what)
    t.equal(refused.headers.get('content-type'), 'application/json; charset=utf-8', what)
    t.equal(refused.body.error.code, 'UNAUTHENTICATED', what)
    t.equal(refused.headers.get('x-content-type-options'), 'nosniff', what)
    t.notOk(refused.text.includes('http_request_duration_seconds'), `${what}: nothing of the metrics`)
  }
  for (const scheme of ['Bearer', 'bearer']) {
    const scrape = await api.get('/metrics', { authorization: `${scheme} ${TOKEN}` })
    t.equal(scrape.status, 200, `${scheme} <METRICS_TOKEN>`)
    t.match(scrape.text, /^http_request_duration_seconds_count\{method="GET",route="\/metrics",status_code="401"\} 6$/m, 'the refusals are counted')
  }
  const api401 = await api.get(`${V1}/products`, bearer(TOKEN))
  t.equal(api401.status, 401, 'and METRICS_TOKEN is no API token')
})

// CSRF (OWASP CSRF Prevention, "Verifying origin with standard headers"): cookie-authenticated
// unsafe requests must come from this site or an allowed origin; bearer requests are exempt.
import t from 'tap'
import { startApi, testConfig, V1 } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'

const ADMIN = { email: 'admin@shop.test', password: 'a long admin password' }
const ALLOWED = 'https://shop.example'

t.test('an unsafe request with the session cookie from another site is 403', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { auth: { ...testConfig().auth, admin: ADMIN }, corsOrigins: [ALLOWED] } })
  const cookie = (await api.post(`${V1}/sessions`, ADMIN)).headers.get('set-cookie')!.split(';', 1)[0]!
  const issue = (headers: Record<string, string>) => api.post(`${V1}/tokens`, { name: 'x' }, { cookie, ...headers })

  for (const [headers, why] of [
    [{ origin: 'http://evil.test' }, 'another origin'],
    [{ origin: 'null' }, 'an opaque origin'],
    [{ referer: 'http://evil.test/page' }, 'no Origin, a Referer from another site'],
    [{ origin: `${ALLOWED}.evil.test` }, 'an origin that only starts like an allowed one'],
  ] as const) {
    const res = await issue(headers)
    t.equal(res.status, 403, why)
    t.equal(res.body.error.code, 'FORBIDDEN')
  }
  t.equal((await api.get(`${V1}/tokens`)).body.error?.code, 'UNAUTHENTICATED', 'nothing was issued to an anonymous caller either')
  t.same((await api.get(`${V1}/tokens`, { cookie })).body, [], 'and nothing was issued at all')

  t.equal((await issue({ origin: ALLOWED })).status, 201, 'an origin in CORS_ORIGINS')
  t.equal((await issue({ origin: api.origin })).status, 201, "the service's own origin")
  t.equal((await issue({ referer: `${api.origin}/somewhere` })).status, 201, 'a Referer from the service itself')
  t.equal((await issue({})).status, 201, 'neither header: not a browser page (browsers send Origin on unsafe requests)')
  t.equal((await api.get(`${V1}/tokens`, { cookie, origin: 'http://evil.test' })).status, 200, 'safe methods are not checked')

  const token = (await api.post(`${V1}/tokens`, { name: 'w', scopes: ['read', 'write'] }, { cookie })).body.token as string
  const bearer = await api.post(`${V1}/tokens`, { name: 'y' }, { authorization: `Bearer ${token}`, origin: 'http://evil.test' })
  t.equal(bearer.status, 201, 'a bearer request is not subject to it: browsers never add the header by themselves')
})

// Bearer JWTs of an external identity provider, against a key set this test serves on loopback:
// signature, exp, nbf, iss, aud; alg none and HMAC refused; key rotation; an unreachable key set
// (RFC 7519, RFC 8725 JWT best current practices; OWASP API2 broken authentication).
import { createHmac } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose'
import t, { type Test } from 'tap'
import { bearer, startApi, testConfig, V1 } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const ISSUER = 'https://id.shop.test/'
const AUDIENCE = 'https://api.shop.test'

interface Key {
  kid: string
  privateKey: CryptoKey
  publicKey: CryptoKey
  jwk: JWK
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true })
  return { kid, privateKey, publicKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } }
}

/** The provider's JWKS endpoint: serves `keys`, or a 503 while `down`. */
async function keySet(t: { teardown(fn: () => unknown): void }) {
  const state = { keys: [] as JWK[], down: false, fetches: 0 }
  const server: Server = createServer((_request, response) => {
    state.fetches++
    if (state.down) return void response.writeHead(503).end()
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const address = server.address()
  return { state, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/jwks` }
}

const sign = (key: Key, claims: JWTPayload = {}, options: { exp?: string | number; iss?: string; aud?: string } = {}) =>
  new SignJWT({ email: 'jo@idp.test', name: 'Jo from the IdP', roles: [], ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setSubject((claims.sub as string | undefined) ?? 'idp-user-1')
    .setIssuer(options.iss ?? ISSUER)
    .setAudience(options.aud ?? AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(options.exp ?? '5m')
    .sign(key.privateKey)

/** A provider publishing one key, and the service trusting it, its roles in `rolesClaim`. */
async function withProvider(t: Test, kid: string, rolesClaim: string) {
  const jwks = await keySet(t)
  const key = await newKey(kid)
  jwks.state.keys = [key.jwk]
  const jwt = { issuer: ISSUER, audience: AUDIENCE, jwksUrl: jwks.url, rolesClaim, jwksCooldownMs: 0 }
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { auth: { ...testConfig().auth, jwt } } })
  return { jwks, key, api }
}

const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')

t.test('external identity provider tokens', async (t) => {
  const { jwks, key: first, api } = await withProvider(t, 'key-1', 'roles')

  t.test('a valid token: its user is created at first use, then matched by subject', async (t) => {
    const token = await sign(first)
    const created = await api.as(bearer(token)).post(`${V1}/orders`, {})
    t.equal(created.status, 201)
    const again = await api.as(bearer(await sign(first, { name: 'Renamed at the IdP' }))).post(`${V1}/orders`, {})
    t.equal(again.body.user_id, created.body.user_id, 'the same subject is the same user')
    const rows = await api.db.query<{ email: string; name: string; external_subject: string; password_hash: string | null }>(
      'SELECT email, name, external_subject, password_hash FROM users WHERE id = $1',
      [created.body.user_id],
    )
    t.same(rows, [{ email: 'jo@idp.test', name: 'Jo from the IdP', external_subject: 'idp-user-1', password_hash: null }], 'no password: the provider signs them in')
    const self = await api.as(bearer(token)).get(`${V1}/users/${created.body.user_id}`)
    t.equal(self.body.email, 'jo@idp.test', 'the user reads themself')
    t.equal(self.headers.get('cache-control'), 'no-store')
  })

  t.test('roles come from the configured claim, at every request', async (t) => {
    const sub = 'idp-admin'
    const asAdmin = api.as(bearer(await sign(first, { sub, roles: ['admin'] })))
    t.equal((await asAdmin.post(`${V1}/products`, productBody())).status, 201, 'an admin by the claim writes products')
    const demoted = api.as(bearer(await sign(first, { sub, roles: [] })))
    t.equal((await demoted.post(`${V1}/products`, productBody())).status, 403, 'and is not one once the claim drops the role')
    const stored = await api.db.query<{ roles: string[] }>('SELECT roles FROM users WHERE external_subject = $1', [sub])
    t.same(stored, [{ roles: [] }], 'the row follows the provider')
  })

  t.test("a provider's email taken by a local account is not merged into it", async (t) => {
    const local = await api.newUser()
    const res = await api.as(bearer(await sign(first, { sub: 'idp-user-2', email: local.email }))).post(`${V1}/orders`, {})
    t.equal(res.status, 201)
    t.not(res.body.user_id, local.id, 'another account: the email alone proves nothing')
    t.equal((await local.api.get(`${V1}/orders`)).body.length, 0)
  })

  t.test('tampered, expired, foreign and misaddressed tokens: 401 invalid_token', async (t) => {
    const other = await newKey('key-1') // the right key id, the wrong key
    const good = await sign(first)
    const [header, payload] = good.split('.')
    const publicPem = await exportSPKI(first.publicKey)
    const hmacHeader = b64({ alg: 'HS256', kid: 'key-1' })
    const hmac = `${hmacHeader}.${payload}.${createHmac('sha256', publicPem).update(`${hmacHeader}.${payload}`).digest('base64url')}`
    const cases: [string, string][] = [
      ['alg none', `${b64({ alg: 'none' })}.${payload}.`],
      ['HMAC signed with the public key', hmac],
      ['signed by another key', await sign(other)],
      ['a changed payload', `${header}.${b64({ sub: 'idp-admin', roles: ['admin'], iss: ISSUER, aud: AUDIENCE, exp: 9999999999 })}.${good.split('.')[2]}`],
      ['expired', await sign(first, {}, { exp: Math.floor(Date.now() / 1000) - 600 })],
      ['not yet valid', await sign(first, { nbf: Math.floor(Date.now() / 1000) + 600 })],
      ['another audience', await sign(first, {}, { aud: 'https://other.test' })],
      ['another issuer', await sign(first, {}, { iss: 'https://evil.test/' })],
    ]
    for (const [what, token] of cases) {
      const res = await api.as(bearer(token)).get(`${V1}/products`)
      t.equal(res.status, 401, what)
      t.equal(res.headers.get('www-authenticate'), 'Bearer realm="api", error="invalid_token"', `${what}: the challenge names the error`)
      t.equal(res.body.error.code, 'UNAUTHENTICATED')
    }
  })

  t.test('key rotation: a token signed with a new key is accepted once the provider publishes it', async (t) => {
    const second = await newKey('key-2')
    jwks.state.keys = [first.jwk, second.jwk]
    t.equal((await api.as(bearer(await sign(second))).post(`${V1}/orders`, {})).status, 201, 'the unknown key id makes the service fetch the set again')
    jwks.state.keys = [second.jwk]
    t.equal((await api.as(bearer(await sign(second))).get(`${V1}/orders`)).status, 200)
  })

  t.test('an unreachable key set is 503 with Retry-After, not 401', async (t) => {
    jwks.state.down = true
    t.teardown(() => void (jwks.state.down = false))
    const third = await newKey('key-3')
    const res = await api.as(bearer(await sign(third))).get(`${V1}/orders`)
    t.equal(res.status, 503)
    t.equal(res.body.error.code, 'SERVICE_UNAVAILABLE')
    t.ok(Number(res.headers.get('retry-after')) > 0)
  })

  t.test("the service's own tokens still work beside JWTs", async (t) => {
    const user = await api.newUser()
    t.equal((await user.api.get(`${V1}/orders`)).status, 200)
  })
})

t.test('a nested roles claim (Keycloak: realm_access.roles); tokens without email or name', async (t) => {
  const { key, api } = await withProvider(t, 'kc', 'realm_access.roles')
  const admin = await sign(key, { sub: 'kc-admin', realm_access: { roles: ['admin', 'offline_access', 7] }, roles: undefined })
  t.equal((await api.as(bearer(admin)).post(`${V1}/products`, productBody())).status, 201, 'the nested claim makes an admin')
  const stored = await api.db.query<{ roles: string[] }>('SELECT roles FROM users WHERE external_subject = $1', ['kc-admin'])
  t.same(stored, [{ roles: ['admin'] }], "the provider's roles the service does not know are left out")
  const plain = await sign(key, { sub: 'kc-user', email: 'kc@idp.test', email_verified: false, name: '  ', roles: ['admin'] })
  const order = await api.as(bearer(plain)).post(`${V1}/orders`, {})
  t.equal(order.status, 201)
  const [user] = await api.db.query<{ email: string; name: string; roles: string[] }>('SELECT email, name, roles FROM users WHERE id = $1', [order.body.user_id])
  t.match(user, { email: /^[0-9a-f]{32}@external\.invalid$/, name: 'kc-user', roles: [] }, 'an unverified email is not taken; the subject names them; a top-level roles claim is not the configured one')
  const long = await api.as(bearer(await sign(key, { sub: 'x'.repeat(256) }))).get(`${V1}/orders`)
  t.equal(long.status, 401, 'a subject longer than the column holds')
})

t.test('a claim whose own name has dots (Auth0 namespaces custom claims with a URL)', async (t) => {
  const { key, api } = await withProvider(t, 'a0', 'https://shop.example/roles')
  const token = await sign(key, { sub: 'auth0|1', 'https://shop.example/roles': ['admin'] })
  t.equal((await api.as(bearer(token)).post(`${V1}/products`, productBody())).status, 201)
})

t.test('without a provider configured a JWT is just an unknown token', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!)
  const key = await newKey('key-1')
  const res = await api.as(bearer(await sign(key))).get(`${V1}/products`)
  t.equal(res.status, 401)
  t.match(res.headers.get('www-authenticate'), /invalid_token/)
})

// Bearer tokens (RFC 6750): issued once, stored as a hash, scoped, listed without secrets, revoked at
// once where they are revoked and within a second everywhere else.
import t from 'tap'
import { hashPassword } from '../../src/auth/passwords.js'
import { cachingTokens, TOKEN_CACHE_MS } from '../../src/auth/token-cache.js'
import { MAX_TOKENS } from '../../src/auth/tokens.js'
import { accounts, type Accounts } from '../../src/db/accounts.js'
import { startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { until } from '../helpers/until.js'

const ADMIN = { email: 'admin@shop.test', password: 'a long admin password' }
const auth = { ...testConfig().auth, admin: ADMIN }

async function session(api: Api, email = ADMIN.email, password = ADMIN.password): Promise<Record<string, string>> {
  const res = await api.post(`${V1}/sessions`, { email, password })
  return { cookie: res.headers.get('set-cookie')!.split(';', 1)[0]! }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

for (const kind of databaseKinds()) {
  t.test(`${kind}: tokens`, async (t) => {
    const api = await startApi(t, kind, undefined, { config: { auth } })
    const admin = await session(api)

    t.test('issuing needs a caller; the secret is shown once', async (t) => {
      const anonymous = await api.post(`${V1}/tokens`, { name: 'ci' })
      t.equal(anonymous.status, 401)
      t.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="api"')
      const issued = await api.post(`${V1}/tokens`, { name: 'ci' }, admin)
      t.equal(issued.status, 201)
      t.equal(issued.headers.get('location'), `${V1}/tokens/${issued.body.id as string}`)
      t.match(issued.body.token, /^rf_token_[A-Za-z0-9_-]{43}$/)
      t.same(issued.body.scopes, ['read'], 'read only unless asked')
      const days = (Date.parse(issued.body.expires_at) - Date.now()) / 86_400_000
      t.ok(days > 29.9 && days <= 30, 'expires in 30 days by default')
      const listed = await api.get(`${V1}/tokens`, admin)
      t.equal(listed.status, 200)
      const mine = listed.body.find((x: { id: string }) => x.id === issued.body.id)
      t.same(Object.keys(mine).sort(), ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'scopes'], 'never the secret again')
      const stored = await api.db.query<{ secret_hash: string }>('SELECT secret_hash FROM tokens WHERE id = $1', [issued.body.id])
      t.not(stored[0]!.secret_hash, issued.body.token, 'stored as a hash')
      t.equal((await api.post(`${V1}/tokens`, { name: 'x', scopes: ['admin'] }, admin)).status, 422, 'unknown scopes are refused')
      t.equal((await api.post(`${V1}/tokens`, { name: 'x', expires_in_days: 366 }, admin)).status, 422, 'at most a year')
    })

    t.test('a token authenticates; its scopes bound what it may do', async (t) => {
      const reader = (await api.post(`${V1}/tokens`, { name: 'reader' }, admin)).body
      const writer = (await api.post(`${V1}/tokens`, { name: 'writer', scopes: ['read', 'write'], expires_in_days: 1 }, admin)).body
      const listed = await api.get(`${V1}/tokens`, bearer(reader.token))
      t.equal(listed.status, 200, 'a read token reads')
      t.equal((await api.get(`${V1}/sessions/current`, bearer(reader.token))).status, 404, 'a token is no session')
      t.equal((await api.delete(`${V1}/sessions/current`, bearer(writer.token))).status, 404, 'nor can it end one')
      t.ok(listed.body.find((x: { id: string }) => x.id === reader.id).last_used_at, 'its last use is recorded')
      const refused = await api.post(`${V1}/tokens`, { name: 'more' }, bearer(reader.token))
      t.equal(refused.status, 403)
      t.equal(refused.body.error.code, 'FORBIDDEN')
      t.equal(refused.headers.get('www-authenticate'), 'Bearer realm="api", error="insufficient_scope", scope="write"')
      t.equal((await api.post(`${V1}/tokens`, { name: 'more' }, bearer(writer.token))).status, 201, 'a write token writes')
      const read = await api.get(`${V1}/products`, bearer(reader.token))
      t.equal(read.status, 200)
      t.equal(read.headers.get('cache-control'), 'no-store', 'an authenticated read is never public')
    })

    t.test('bad, expired and revoked tokens are 401 invalid_token, on any route', async (t) => {
      const issued = (await api.post(`${V1}/tokens`, { name: 'short' }, admin)).body
      for (const [token, why] of [['rf_token_forged', 'unknown'], ['', 'empty']] as const) {
        const res = await api.get(`${V1}/products`, { authorization: `Bearer ${token}` })
        t.equal(res.status, 401, why)
      }
      const forged = await api.get(`${V1}/products`, bearer('rf_token_forged'))
      t.equal(forged.headers.get('www-authenticate'), 'Bearer realm="api", error="invalid_token"')
      const basic = await api.get(`${V1}/products`, { authorization: 'Basic YWRtaW46cHc=' })
      t.equal(basic.status, 401)
      t.equal(basic.headers.get('www-authenticate'), 'Bearer realm="api"', 'another scheme: the challenge, no token error')

      await api.db.query(`UPDATE tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [issued.id])
      t.equal((await api.get(`${V1}/tokens`, bearer(issued.token))).status, 401, 'expired')

      const revocable = (await api.post(`${V1}/tokens`, { name: 'revocable' }, admin)).body
      t.equal((await api.get(`${V1}/tokens`, bearer(revocable.token))).status, 200)
      t.equal((await api.delete(`${V1}/tokens/${revocable.id as string}`, admin)).status, 204)
      const revoked = await api.get(`${V1}/tokens`, bearer(revocable.token))
      t.equal(revoked.status, 401, 'revoked at once')
      t.match(revoked.headers.get('www-authenticate'), /error="invalid_token"/)
      t.equal((await api.delete(`${V1}/tokens/${revocable.id as string}`, admin)).status, 404, 'a second revoke')
      t.equal((await api.delete(`${V1}/tokens/not-a-uuid`, admin)).status, 404)
    })

    t.test("another user's tokens are neither listed nor revocable", async (t) => {
      await accounts(api.db).create({ email: 'b@shop.test', name: 'B', passwordHash: await hashPassword('b long password'), roles: [] })
      const other = await session(api, 'b@shop.test', 'b long password')
      const theirs = (await api.post(`${V1}/tokens`, { name: 'theirs' }, other)).body
      t.notOk((await api.get(`${V1}/tokens`, admin)).body.some((x: { id: string }) => x.id === theirs.id))
      t.equal((await api.delete(`${V1}/tokens/${theirs.id as string}`, admin)).status, 404, 'as unknown as a missing one')
      t.equal((await api.get(`${V1}/tokens`, bearer(theirs.token))).status, 200, 'and still valid')
    })

    t.test(`a user holds at most ${MAX_TOKENS} tokens, expired ones included; issuing at once does not pass it`, async (t) => {
      const user = await api.newUser()
      const store = accounts(api.db)
      const expired = new Date(Date.now() - 1000)
      // newUser's own token is the first.
      for (let i = 1; i < MAX_TOKENS - 2; i++) await store.createToken(user.id, `hash-${user.id}-${i}`, { name: `t${i}`, scopes: ['read'], expiresAt: expired })
      // Two places left, five asking at once: two get them.
      const asked = await Promise.all(Array.from({ length: 5 }, (_, i) => user.api.post(`${V1}/tokens`, { name: `at once ${i}` })))
      t.same(asked.map((answer) => answer.status).sort(), [201, 201, 409, 409, 409])
      const refused = asked.find((answer) => answer.status === 409)!
      t.equal(refused.body.error.code, 'CONFLICT')
      t.match(refused.body.error.message, `at most ${MAX_TOKENS} tokens`)
      const listed = (await user.api.get(`${V1}/tokens`)).body as { id: string }[]
      t.equal(listed.length, MAX_TOKENS, 'the list is bounded as the document says')
      t.equal((await user.api.delete(`${V1}/tokens/${listed[0]!.id}`)).status, 204)
      t.equal((await user.api.post(`${V1}/tokens`, { name: 'after one was revoked' })).status, 201)
    })
  })
}

t.test('a token lookup is used again for TOKEN_CACHE_MS, never longer; a revocation or a change of roles forgets it', async (t) => {
  const lookups: string[] = []
  const user = { id: 'u1', email: 'u@shop.test', name: 'U', roles: [] }
  const found = { id: 't1', name: 'ci', scopes: ['read'], expiresAt: new Date(8.64e15), lastUsedAt: null, createdAt: new Date(0), user }
  const store = {
    ...({} as Accounts),
    token: async (hash: string) => (lookups.push(hash), hash === 'known' ? { ...found } : undefined),
    deleteToken: async () => true,
    setRoles: async () => {},
  }
  let clock = 1_000
  const cached = cachingTokens(store, TOKEN_CACHE_MS, () => clock)
  t.equal((await cached.token('known'))?.id, 't1')
  clock += TOKEN_CACHE_MS - 1
  await cached.token('known')
  t.same(lookups, ['known'], 'within the time: no second lookup')
  clock += 1
  await cached.token('known')
  t.same(lookups, ['known', 'known'], 'then looked up again')
  t.equal(await cached.token('unknown'), undefined)
  t.equal(await cached.token('unknown'), undefined)
  t.same(lookups.slice(2), ['unknown', 'unknown'], 'an unknown token is never kept: one created elsewhere works at once')
  await cached.deleteToken('u1', 't1')
  await cached.token('known')
  t.equal(lookups.length, 5, 'a revocation here forgets what was looked up')
  await cached.setRoles('u1', ['admin'])
  await cached.token('known')
  t.equal(lookups.length, 6, 'and so does a change of roles')
})

t.test('a token revoked on one instance stops working there at once, and on another once its lookup is TOKEN_CACHE_MS old', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const a = await startApi(t, 'postgres', undefined, { config: { auth } })
  const b = await startApi(t, 'postgres', undefined, { config: { auth }, besides: a })
  const user = await a.newUser()
  t.equal((await b.get(`${V1}/tokens`, bearer(user.token))).status, 200, 'the other instance has looked it up')
  const [token] = (await a.get(`${V1}/tokens`, bearer(user.token))).body as { id: string }[]
  t.equal((await a.delete(`${V1}/tokens/${token!.id}`, bearer(user.token))).status, 204)
  t.equal((await a.get(`${V1}/tokens`, bearer(user.token))).status, 401, 'at once where it was revoked')
  // Bounded at five times the cache's time: the refusal comes, however slow the machine.
  const refused = await until('the other instance to refuse the revoked token', async () => ((await b.get(`${V1}/tokens`, bearer(user.token))).status === 401 || undefined), {
    everyMs: 50,
    tries: (5 * TOKEN_CACHE_MS) / 50,
  })
  t.equal(refused, true, 'and on the other instance')
})

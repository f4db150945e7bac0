// Cookie sessions: sign in, the current session, sign out; lifetimes; one answer for every failed
// sign-in (checklist AUTH; OWASP Session Management and Authentication cheat sheets).
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'

const ADMIN = { email: 'admin@shop.test', password: 'a long admin password' }
const auth = { ...testConfig().auth, admin: ADMIN }

const cookieOf = (setCookie: string | null) => setCookie!.split(';', 1)[0]!

async function signIn(api: Api, email = ADMIN.email, password = ADMIN.password) {
  return api.post(`${V1}/sessions`, { email, password })
}

for (const kind of databaseKinds()) {
  t.test(`${kind}: sessions`, async (t) => {
    const api = await startApi(t, kind, undefined, { config: { auth } })

    t.test('a failed sign-in: 401, the same for an unknown email and a wrong password', async (t) => {
      const wrong = await signIn(api, ADMIN.email, 'not the password')
      const unknown = await signIn(api, 'nobody@shop.test', 'not the password')
      for (const res of [wrong, unknown]) {
        t.equal(res.status, 401)
        t.equal(res.body.error.code, 'UNAUTHENTICATED')
        t.equal(res.headers.get('www-authenticate'), 'Bearer realm="api"')
        t.equal(res.headers.get('set-cookie'), null, 'no cookie')
      }
      t.equal(wrong.body.error.message, unknown.body.error.message, 'nothing tells which was wrong')
      t.equal((await api.post(`${V1}/sessions`, { email: ADMIN.email })).status, 422, 'a missing password')
      t.equal((await api.post(`${V1}/sessions`, { ...ADMIN, remember: true })).status, 422, 'an unknown field')
    })

    t.test('sign in, see the session, sign out', async (t) => {
      const created = await signIn(api, ADMIN.email.toUpperCase())
      t.equal(created.status, 201, 'emails are matched without case')
      t.equal(created.headers.get('location'), `${V1}/sessions/current`)
      t.equal(created.headers.get('cache-control'), 'no-store')
      const setCookie = created.headers.get('set-cookie')!
      t.match(setCookie, /^session=rf_session_[A-Za-z0-9_-]{43};/)
      for (const attribute of ['HttpOnly', 'SameSite=Lax', 'Path=/api', 'Max-Age=2592000']) t.match(setCookie, attribute)
      t.notMatch(setCookie, /Secure/, 'not Secure unless COOKIE_SECURE')
      t.same(Object.keys(created.body.user).sort(), ['email', 'id', 'name', 'roles'], 'no password hash in the representation')
      t.same(created.body.user.roles, ['admin'], 'ADMIN_EMAIL and ADMIN_PASSWORD made an admin')

      const cookie = cookieOf(setCookie)
      const current = await api.get(`${V1}/sessions/current`, { cookie })
      t.equal(current.status, 200)
      t.equal(current.body.id, created.body.id)
      t.equal(current.body.user.email, ADMIN.email)
      const anonymous = await api.get(`${V1}/sessions/current`)
      t.equal(anonymous.status, 401)
      t.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="api"')

      // Another instance on the same database sees the same session, and its end.
      const other = await buildApp(testConfig({ migrateOnStart: false }), { database: api.db })
      t.teardown(() => other.close())
      t.equal((await other.inject({ url: `${V1}/sessions/current`, headers: { cookie } })).statusCode, 200)
      const ended = await api.delete(`${V1}/sessions/current`, { cookie })
      t.equal(ended.status, 204)
      t.match(ended.headers.get('set-cookie'), /^session=;.*Expires=Thu, 01 Jan 1970/, 'the cookie is cleared')
      t.equal((await api.get(`${V1}/sessions/current`, { cookie })).status, 401, 'an ended session is no credential')
      t.equal((await other.inject({ url: `${V1}/sessions/current`, headers: { cookie } })).statusCode, 401, 'on any instance')
      t.equal((await api.delete(`${V1}/sessions/current`, { cookie })).status, 401)
    })

    t.test('idle and absolute lifetimes', async (t) => {
      const idle = cookieOf((await signIn(api)).headers.get('set-cookie'))
      const old = cookieOf((await signIn(api)).headers.get('set-cookie'))
      const fresh = cookieOf((await signIn(api)).headers.get('set-cookie'))
      const id = async (cookie: string) => (await api.get(`${V1}/sessions/current`, { cookie })).body.id as string
      const [idleId, oldId] = [await id(idle), await id(old)]
      await api.db.query(`UPDATE sessions SET last_seen_at = now() - interval '25 hours' WHERE id = $1`, [idleId])
      await api.db.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE id = $1`, [oldId])
      t.equal((await api.get(`${V1}/sessions/current`, { cookie: idle })).status, 401, 'unused for longer than SESSION_IDLE_MINUTES')
      t.equal((await api.get(`${V1}/sessions/current`, { cookie: old })).status, 401, 'past SESSION_MAX_DAYS')
      t.equal((await api.get(`${V1}/sessions/current`, { cookie: fresh })).status, 200)
      t.equal((await api.get(`${V1}/sessions/current`, { cookie: 'session=rf_session_forged' })).status, 401, 'an unknown secret')
    })

    t.test('secrets are stored only as hashes', async (t) => {
      const secret = cookieOf((await signIn(api)).headers.get('set-cookie')).slice('session='.length)
      const rows = await api.db.query<{ secret_hash: string }>('SELECT secret_hash FROM sessions', [])
      t.ok(rows.length > 0)
      t.ok(rows.every((r) => /^[0-9a-f]{64}$/.test(r.secret_hash) && r.secret_hash !== secret))
      const users = await api.db.query<{ password_hash: string }>('SELECT password_hash FROM users', [])
      t.match(users[0]!.password_hash, /^scrypt\$/)
    })
  })
}

t.test('COOKIE_SECURE marks the cookie Secure', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { auth: { ...auth, cookieSecure: true } } })
  t.match((await signIn(api)).headers.get('set-cookie'), /; Secure/)
})

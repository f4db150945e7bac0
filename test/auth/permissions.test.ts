// Who may do what: collection rules, ownership and field rules on users, products and reviews
// (OWASP API Top 10: API1 broken object level authorization, API3 broken object property level
// authorization, API5 broken function level authorization; checklist SEC).
import t from 'tap'
import { bearer, eachDatabase, startApi, testConfig, V1 } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const V2 = '/api/v2'
const registration = (email: string) => ({ email, name: 'New customer', password: 'a long enough password' })

t.test('registration is open: the account signs in, its password is never shown (AUTH)', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.anonymous.post(`${V1}/users`, registration('New.Customer@Shop.test'))
    t.equal(created.status, 201)
    t.match(created.body, { email: 'new.customer@shop.test', name: 'New customer', roles: [] }, 'the email is stored lower-cased')
    t.notOk('password' in created.body || 'password_hash' in created.body, 'no password in the representation')
    t.notMatch(created.text, /scrypt|password/, 'nor anything about it')
    const signedIn = await api.anonymous.post(`${V1}/sessions`, { email: 'new.customer@shop.test', password: 'a long enough password' })
    t.equal(signedIn.status, 201, 'the new account signs in')

    const again = await api.anonymous.post(`${V1}/users`, registration('NEW.customer@shop.test'))
    t.equal(again.status, 409, 'one account per email, whatever its case')
    t.same(again.body.error.details, [{ field: 'email', reason: 'is already taken' }])

    const bad = await api.anonymous.post(`${V1}/users`, { email: 'not an email', name: '', password: 'short' })
    t.equal(bad.status, 422)
    t.same(bad.body.error.details.map((d: { field: string }) => d.field).sort(), ['email', 'name', 'password'])
    t.equal((await api.anonymous.post(`${V1}/users`, { ...registration('x@shop.test'), password_hash: 'x' })).status, 422, 'no hash may be sent')
  }),
)

t.test('nobody grants themselves a role or writes another id (mass assignment)', (t) =>
  eachDatabase(t, async (t, api) => {
    const escalate = await api.anonymous.post(`${V1}/users`, { ...registration('sneaky@shop.test'), roles: ['admin'] })
    t.equal(escalate.status, 403)
    t.same(escalate.body.error.details, [{ field: 'roles', reason: 'may only be written by admins' }])
    t.equal((await api.anonymous.post(`${V1}/users`, { ...registration('sneaky@shop.test'), id: '01890000-0000-7000-8000-000000000000' })).status, 422)

    const user = await api.newUser()
    const self = `${V1}/users/${user.id}`
    const patched = await user.api.patch(self, { roles: ['admin'] })
    t.equal(patched.status, 403, 'a user cannot make themselves admin')
    t.same(patched.body.error.details, [{ field: 'roles', reason: 'may only be written by admins' }])
    t.same((await api.admin.get(self)).body.roles, [], 'and nothing changed')

    // GET, edit, PUT: the roles read come back unchanged, which is no write; the password is kept.
    const read = (await user.api.get(self)).body
    const put = await user.api.put(self, { ...read, name: 'Renamed' })
    t.equal(put.status, 200, 'a round trip with the unchanged roles is accepted')
    t.equal(put.body.name, 'Renamed')
    const moved = await user.api.put(self, { ...read, id: '01890000-0000-7000-8000-000000000000' })
    t.same(moved.body.error.details, [{ field: 'id', reason: 'is read-only and differs from the stored value' }], 'a changed id, named once')
    const hash = async () => (await api.db.query<{ h: string }>('SELECT password_hash AS h FROM users WHERE id = $1', [user.id]))[0]!.h
    t.equal(await hash(), 'not-a-password-hash', 'a PUT without a password keeps it')
    t.equal((await user.api.patch(self, { password: 'a new long password' })).status, 200, 'a user changes their own password')
    t.match(await hash(), /^scrypt\$/, 'stored as its hash')

    const granted = await api.admin.patch(self, { roles: ['admin'] })
    t.equal(granted.status, 200, 'an admin grants roles')
    t.same(granted.body.roles, ['admin'])
  }),
)

t.test('a user is readable by any signed-in caller; the email only by themself and admins', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const path = `${V1}/users/${alice.id}`
    const anonymous = await api.anonymous.get(path)
    t.equal(anonymous.status, 401)
    t.equal(anonymous.headers.get('www-authenticate'), 'Bearer realm="api"')
    const other = await bob.api.get(path)
    t.equal(other.status, 200)
    t.same(Object.keys(other.body).sort(), ['created_at', 'id', 'name', 'roles', 'updated_at'], 'no email for another user')
    const self = await alice.api.get(path)
    t.equal(self.body.email, alice.email)
    t.equal((await api.admin.get(path)).body.email, alice.email, 'admins see it')
    t.not(other.headers.get('etag'), self.headers.get('etag'), 'the two representations have two tags')
    t.equal(other.headers.get('cache-control'), 'no-store', 'never cached: it depends on the caller')
    t.match(other.headers.get('vary'), /Authorization, Cookie/)

    t.equal((await bob.api.get(`${V1}/users`)).status, 403, 'only admins list users')
    const list = await api.admin.get(`${V1}/users?sort=name`)
    t.equal(list.status, 200)
    t.ok(list.body.every((u: object) => !('email' in u)), 'the list shows no emails')

    t.equal((await bob.api.patch(path, { name: 'Hijacked' })).status, 403, 'another user cannot change them')
    t.equal((await bob.api.put(path, { name: 'Hijacked', email: 'bob@evil.test', password: 'a long enough password' })).status, 403)
    t.equal((await alice.api.delete(path)).status, 403, 'only admins delete users')
    t.equal((await api.admin.get(path)).body.name, self.body.name, 'nothing changed')
  }),
)

t.test('deleting a user ends their tokens; their reviews stay without an author; their orders keep them', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const product = (await api.admin.post(`${V1}/products`, productBody())).body.id
    const review = (await alice.api.post(`${V1}/products/${product}/reviews`, { rating: 4 })).body
    const before = await api.admin.get(`${V1}/products/${product}/reviews/${review.id}`)
    t.equal((await api.admin.delete(`${V1}/users/${alice.id}`)).status, 204)
    const revoked = await alice.api.get(`${V1}/products`)
    t.equal(revoked.status, 401, "the deleted user's token is gone")
    t.match(revoked.headers.get('www-authenticate'), /error="invalid_token"/)
    const after = await api.admin.get(`${V1}/products/${product}/reviews/${review.id}`)
    t.equal(after.body.author_id, null)
    t.not(after.headers.get('etag'), before.headers.get('etag'), 'the cleared author moves updated_at, and the ETag')

    await bob.api.post(`${V1}/orders`, {})
    const refused = await api.admin.delete(`${V1}/users/${bob.id}`)
    t.equal(refused.status, 409, 'a user with orders is kept')
    t.equal(refused.body.error.code, 'CONFLICT')
    t.equal((await bob.api.get(`${V1}/users/${bob.id}`)).status, 200)
  }),
)

t.test('REGISTRATION=admins and closed', async (t) => {
  const kind = databaseKinds()[0]!
  const admins = await startApi(t, kind, undefined, { config: { auth: { ...testAuth(), registration: 'admins' } } })
  t.equal((await admins.anonymous.post(`${V1}/users`, registration('a@shop.test'))).status, 401)
  t.equal((await (await admins.newUser()).api.post(`${V1}/users`, registration('a@shop.test'))).status, 403)
  t.equal((await admins.admin.post(`${V1}/users`, { ...registration('a@shop.test'), roles: ['admin'] })).status, 201, 'admins create accounts, with roles')

  const closed = await startApi(t, kind, undefined, { config: { auth: { ...testAuth(), registration: 'closed' } } })
  const refused = await closed.admin.post(`${V1}/users`, registration('b@shop.test'))
  t.equal(refused.status, 403, 'nobody registers, not even an admin (npm run users:create does)')
  t.match(refused.body.error.message, /Nobody may create/)
  t.equal((await closed.anonymous.post(`${V1}/users`, registration('b@shop.test'))).status, 403)
})

function testAuth() {
  return { ...testConfig().auth, sessionIdleMinutes: 60, sessionMaxDays: 1 }
}

t.test('products: anyone reads, admins write; cost only for admins, in every representation and version', (t) =>
  eachDatabase(t, async (t, api) => {
    const user = await api.newUser()
    const anonymousWrite = await api.anonymous.post(`${V1}/products`, productBody())
    t.equal(anonymousWrite.status, 401, 'anonymous: 401 before anything else')
    t.equal(anonymousWrite.headers.get('www-authenticate'), 'Bearer realm="api"')
    const userWrite = await user.api.post(`${V1}/products`, productBody())
    t.equal(userWrite.status, 403, 'a signed-in customer: 403')
    t.equal(userWrite.body.error.code, 'FORBIDDEN')
    const created = await api.admin.post(`${V1}/products`, { ...productBody(), cost: 1.25 })
    t.equal(created.status, 201)
    t.equal(created.body.cost, 1.25, 'the admin sees cost')
    const path = `${V1}/products/${created.body.id}`
    for (const [who, client] of [['anonymous', api.anonymous], ['a customer', user.api]] as const) {
      t.notOk('cost' in (await client.get(path)).body, `no cost for ${who}`)
      t.notOk('cost' in (await client.get(`${V2}/products/${created.body.id}`)).body, `nor in v2 for ${who}`)
      t.notOk((await client.get(`${V1}/products`)).body.some((p: object) => 'cost' in p), `nor in the list for ${who}`)
      t.equal((await client.patch(path, { stock: 1 })).status, who === 'anonymous' ? 401 : 403, `${who} cannot change it`)
      t.equal((await client.delete(path)).status, who === 'anonymous' ? 401 : 403, `${who} cannot delete it`)
    }
    t.same((await api.admin.get(`${V2}/products/${created.body.id}`)).body.cost, { amount: 1.25, currency: 'USD' })
    t.equal((await api.anonymous.get(`${V1}/products?cost=1.25`)).status, 400, 'cost is no filter: it would tell its value')
    t.equal((await api.anonymous.get(`${V1}/products?sort=cost`)).status, 400, 'nor a sort key')
  }),
)

t.test('reviews: signed-in callers write one per product; only the author or an admin changes it (BOLA)', (t) =>
  eachDatabase(t, async (t, api) => {
    const [alice, bob] = [await api.newUser(), await api.newUser()]
    const product = (await api.admin.post(`${V1}/products`, productBody())).body.id
    const reviews = `${V1}/products/${product}/reviews`
    t.equal((await api.anonymous.post(reviews, { rating: 5 })).status, 401)
    const created = await alice.api.post(reviews, { rating: 5, title: 'Great' })
    t.equal(created.status, 201)
    t.equal(created.body.author_id, alice.id, 'the author is the caller')
    const second = await alice.api.post(reviews, { rating: 1 })
    t.equal(second.status, 409, 'one review per user per product')
    t.equal(second.body.error.code, 'CONFLICT')
    const forged = await bob.api.post(reviews, { rating: 1, author_id: alice.id })
    t.equal(forged.status, 422, 'an author in the body is refused')

    const path = `${reviews}/${created.body.id}`
    t.equal((await api.anonymous.get(path)).status, 200, 'anyone reads reviews')
    for (const res of [await bob.api.patch(path, { rating: 1 }), await bob.api.put(path, { rating: 1 }), await bob.api.delete(path)]) {
      t.equal(res.status, 403, "another user cannot touch alice's review")
      t.equal(res.body.error.code, 'FORBIDDEN')
    }
    t.equal((await api.admin.get(path)).body.rating, 5, 'unchanged')
    t.equal((await alice.api.patch(path, { title: 'Still great' })).status, 200, 'the author changes it')
    t.equal((await api.admin.delete(path)).status, 204, 'an admin deletes it')
    t.equal((await bob.api.delete(`${reviews}/01890000-0000-7000-8000-000000000000`)).status, 404, 'an unknown review is 404, not 403')
  }),
)

t.test('a read-only token cannot write, whatever the rules would allow', (t) =>
  eachDatabase(t, async (t, api) => {
    const user = await api.newUser()
    const issued = await user.api.post(`${V1}/tokens`, { name: 'reader', scopes: ['read'] })
    const reader = api.as(bearer(issued.body.token))
    const product = (await api.admin.post(`${V1}/products`, productBody())).body.id
    t.equal((await reader.get(`${V1}/users/${user.id}`)).status, 200)
    const refused = await reader.post(`${V1}/products/${product}/reviews`, { rating: 3 })
    t.equal(refused.status, 403)
    t.match(refused.headers.get('www-authenticate'), /insufficient_scope/)
  }),
)

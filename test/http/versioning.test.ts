// Content negotiation (RFC 9110 §12.5.1) and API versions: checklist EP-26, VER-01 to VER-10, ERR-09.
import t from 'tap'
import { newSecret, secretHash } from '../../src/auth/secrets.js'
import { accounts } from '../../src/db/accounts.js'
import { eachDatabase, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

const V2 = '/api/v2'
const VND1 = 'application/vnd.resourceful.v1+json'
const VND2 = 'application/vnd.resourceful.v2+json'

/** A product the admin creates. */
async function createProduct(api: Api, overrides: Record<string, unknown> = {}): Promise<string> {
  return (await api.admin.post(`${V1}/products`, productBody(overrides))).body.id as string
}

t.test('Accept: JSON unless it admits none; then 406 with the JSON error body (EP-26, ERR-09)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    for (const accept of [undefined, '*/*', 'application/*', 'application/json', 'text/html, application/json;q=0.5', 'application/json; charset=utf-8']) {
      const res = await admin.get(`${V1}/products`, accept === undefined ? {} : { accept })
      t.equal(res.status, 200, `Accept: ${accept}`)
      t.match(res.headers.get('content-type'), /^application\/json/)
    }
    for (const accept of ['application/xml', 'application/json;q=0', 'text/html, application/json;q=0', 'application/json;q=0, */*']) {
      const res = await admin.get(`${V1}/products`, { accept })
      t.equal(res.status, 406, `Accept: ${accept}`)
      t.equal(res.body.error.code, 'NOT_ACCEPTABLE')
      t.match(res.headers.get('content-type'), /^application\/json/, 'the error is JSON whatever Accept said')
    }
    t.equal((await admin.get(`${V1}/nothing`, { accept: 'application/xml' })).status, 404, 'an unknown path is a 404 first')
    t.equal((await admin.request('PUT', `${V1}/products`, { headers: { accept: 'application/xml' }, body: {} })).status, 405, 'and a 405')
  }),
)

t.test('the vendor media type names a version (VER-03, 04, 05)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const id = await createProduct(api, { price: 12.5 })
    const v1 = await admin.get(`${V1}/products/${id}`, { accept: VND1 })
    t.equal(v1.status, 200)
    t.equal(v1.headers.get('content-type'), VND1, 'answered as the type asked for')
    t.match(v1.headers.get('vary'), /Accept/)
    const plain = await admin.get(`${V1}/products/${id}`)
    t.same(JSON.parse(v1.text), plain.body, 'the same representation')
    t.equal(v1.headers.get('etag'), plain.headers.get('etag'), 'the same bytes, the same tag: it works in If-Match under either type')
    const missing = await admin.get(`${V1}/products/nope`, { accept: VND1 })
    t.equal(missing.status, 404)
    t.match(missing.headers.get('content-type'), /^application\/json/, 'errors are application/json, whatever was asked')

    const unversioned = await admin.get(`/api/products/${id}`, { accept: VND2 })
    t.equal(unversioned.status, 200, '/api/{collection} with a vendor type serves that version')
    t.equal(unversioned.headers.get('content-type'), VND2)
    t.same(JSON.parse(unversioned.text).price, { amount: 12.5, currency: 'USD' })
    const list = await admin.get('/api/products?size=1', { accept: VND1 })
    t.equal(list.headers.get('content-type'), VND1)
    t.match(list.headers.get('link'), `<${V1}/products?size=1&page=1>; rel="first"`, 'links name the canonical path')

    t.equal((await admin.get(`${V1}/products/${id}`, { accept: VND2 })).status, 406, 'a vendor type contradicting the path')
    const preferred = await admin.get(`${V2}/products/${id}`, { accept: `${VND1}, ${VND2};q=0.5` })
    t.equal(preferred.headers.get('content-type'), VND2, 'another version preferred, this one still acceptable')
    const refusedV1 = await admin.get(`/api/products/${id}`, { accept: `${VND1};q=0, ${VND2}` })
    t.same(JSON.parse(refusedV1.text).price, { amount: 12.5, currency: 'USD' }, 'a vendor type at q=0 is not asked for')
    const big = await admin.post(`${V1}/products`, 'x'.repeat(1024 * 1024 + 1), { accept: 'application/xml' })
    t.equal(big.status, 413, 'a body over the limit is a 413 before a 406')
    t.equal((await admin.get(`${V1}/products/${id}`, { accept: 'application/vnd.resourceful.v9+json' })).status, 406, 'an unknown version')
    const unknown = await admin.get(`/api/products/${id}`, { accept: 'application/vnd.resourceful.v9+json' })
    t.equal(unknown.status, 406)
    t.match(unknown.body.error.message, 'v1, v2', 'the error lists the versions')

    const created = await admin.post(`${V1}/products`, JSON.stringify(productBody()), { 'content-type': VND1 })
    t.equal(created.status, 201, 'the vendor type is accepted as a request body type')
    const crossed = await admin.post(`${V1}/products`, JSON.stringify(productBody()), { 'content-type': VND2 })
    t.equal(crossed.status, 415, 'a body of another version than the path')
  }),
)

t.test('paths: versions, redirects and slashes (VER-01, 02, 06, 10)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    await createProduct(api)
    t.equal((await admin.get(`${V1}/products`)).status, 200)
    t.equal((await admin.get(`${V2}/products`)).status, 200)
    const unknown = await admin.get('/api/v99/products')
    t.equal(unknown.status, 404)
    t.equal(unknown.body.error.code, 'NOT_FOUND')
    t.match(unknown.body.error.message, 'the versions served are v1, v2')
    t.equal((await admin.get('/api/v1.2/products')).status, 404, 'only major versions')

    const redirect = await fetch(`${api.origin}/api/products?status=active&size=5`, { redirect: 'manual' })
    t.equal(redirect.status, 302, 'an unversioned GET redirects to the current version')
    t.equal(redirect.headers.get('location'), `${V2}/products?status=active&size=5`, 'keeping the query')
    t.equal((await fetch(`${api.origin}/api/products`, { method: 'HEAD', redirect: 'manual' })).status, 302)
    const declined = await fetch(`${api.origin}/api/products`, { headers: { accept: 'application/vnd.resourceful.v9+json;q=0, application/json' }, redirect: 'manual' })
    t.equal(declined.status, 302, 'a vendor type at q=0 asks for nothing: the usual redirect')
    t.equal((await admin.post('/api/products', productBody())).status, 404, 'an unversioned write is not redirected')
    t.equal((await fetch(`${api.origin}/api/nothing`, { redirect: 'manual' })).status, 404, 'nor a path that does not exist')

    const slash = await fetch(`${api.origin}${V1}/products/?size=2`, { redirect: 'manual' })
    t.equal(slash.status, 301, 'a trailing slash redirects permanently')
    t.equal(slash.headers.get('location'), `${V1}/products?size=2`)
    t.equal((await admin.post(`${V1}/products/`, productBody())).status, 404, 'a write with a trailing slash')
    t.equal((await fetch(`${api.origin}${V1}//products`, { redirect: 'manual' })).status, 404, 'a doubled slash')
    t.equal((await fetch(`${api.origin}${V1}/nothing/`, { redirect: 'manual' })).status, 404, 'never a redirect to nothing')
    const slashes = await fetch(`${api.origin}/${'/'.repeat(8000)}a/`, { redirect: 'manual' })
    t.equal(slashes.status, 404, 'a long run of slashes is a plain 404')
  }),
)

t.test('v1 is deprecated: Deprecation, Sunset and the successor (VER-07)', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const id = await createProduct(api)
    const old = await admin.get(`${V1}/products/${id}`)
    t.match(old.headers.get('deprecation'), /^@\d+$/)
    const deprecated = Number(old.headers.get('deprecation')!.slice(1)) * 1000
    const sunset = Date.parse(old.headers.get('sunset')!)
    t.match(old.headers.get('sunset'), /GMT$/)
    t.ok(sunset > deprecated, 'the sunset is after the deprecation')
    t.equal(old.headers.get('link'), `<${V2}/products/${id}>; rel="successor-version"`)
    t.equal((await admin.get(`${V1}/products/nope`)).headers.get('deprecation'), old.headers.get('deprecation'), 'errors of v1 say so too')
    // Refused before any route runs: by the credentials' hook (401), by CSRF (403), by a malformed path (404).
    const user = await api.newUser()
    const session = newSecret('rf_session_')
    await accounts(api.db).createSession(user.id, secretHash(session), new Date(), new Date(Date.now() + 86_400_000))
    const refused = [
      await api.anonymous.get(`${V1}/orders`),
      await api.as({ authorization: 'Bearer nope' }).get(`${V1}/products`),
      await api.as({ cookie: `session=${session}`, origin: 'http://elsewhere.test' }).post(`${V1}/products`, {}),
      await admin.get(`${V1}/products/%zz`),
    ]
    t.same(refused.map((answer) => [answer.status, answer.headers.get('deprecation'), answer.headers.get('sunset')]), [
      [401, old.headers.get('deprecation'), old.headers.get('sunset')],
      [401, old.headers.get('deprecation'), old.headers.get('sunset')],
      [403, old.headers.get('deprecation'), old.headers.get('sunset')],
      [404, old.headers.get('deprecation'), old.headers.get('sunset')],
    ], 'answers refused before routing say so too')
    const current = await admin.get(`${V2}/products/${id}`)
    t.equal(current.headers.get('deprecation'), null)
    t.equal(current.headers.get('sunset'), null)
    t.equal(current.headers.get('link'), null)
  }),
)

t.test('v2 shows amounts as { amount, currency } over the same rows, read and write', (t) =>
  eachDatabase(t, async (t, api) => {
    const admin = api.admin
    const created = await admin.post(`${V2}/products`, productBody({ price: { amount: 12.5 }, cost: { amount: 4, currency: 'USD' } }))
    t.equal(created.status, 201)
    t.same(created.body.price, { amount: 12.5, currency: 'USD' })
    t.same(created.body.cost, { amount: 4, currency: 'USD' })
    const id = created.body.id as string
    const v1 = await admin.get(`${V1}/products/${id}`)
    t.equal(v1.body.price, 12.5, 'v1 reads the same row as a number')
    t.equal(v1.body.cost, 4)
    t.not(v1.headers.get('etag'), created.headers.get('etag'), 'each version has its own tag')

    t.same((await admin.patch(`${V2}/products/${id}`, { price: { amount: 3 }, cost: null })).body.price, { amount: 3, currency: 'USD' })
    t.equal((await admin.get(`${V1}/products/${id}`)).body.price, 3, 'a v2 write, seen by v1')
    t.equal((await admin.get(`${V2}/products/${id}`)).body.cost, null, 'null stays null')
    await admin.patch(`${V1}/products/${id}`, { price: 7 })
    t.same((await admin.get(`${V2}/products/${id}`)).body.price, { amount: 7, currency: 'USD' }, 'a v1 write, seen by v2')

    const list = await admin.get(`${V2}/products?price[gte]=5`)
    t.same(list.body.map((p: { price: unknown }) => p.price), [{ amount: 7, currency: 'USD' }], 'filters compare the amount')
    const replaced = await admin.put(`${V2}/products/${id}`, { ...(await admin.get(`${V2}/products/${id}`)).body, price: { amount: 8, currency: 'USD' } })
    t.equal(replaced.status, 200, 'GET, edit, PUT works in v2')

    const euro = await admin.patch(`${V2}/products/${id}`, { price: { amount: 1, currency: 'EUR' } })
    t.equal(euro.status, 422)
    t.equal(euro.body.error.details[0].field, 'price.currency')
    t.equal((await admin.patch(`${V2}/products/${id}`, { price: 5 })).status, 422, 'v2 takes no bare number')
    t.equal((await admin.patch(`${V1}/products/${id}`, { price: { amount: 5 } })).status, 422, 'and v1 no object')
    t.equal((await admin.get(`${V1}/products/${id}`)).body.price, 8, 'nothing refused was written')
  }),
)

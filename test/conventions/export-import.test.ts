// Export and import (DESIGN "Data over time"): a list as CSV (RFC 4180) or NDJSON, every matching
// row streamed by keyset pages under the list's filters, sort, fields and access rules, up to
// EXPORT_MAX_ROWS; a collection's POST with a CSV or NDJSON body is the array create.
import t, { type Test } from 'tap'
import { bearer, eachDatabase, startApi, testConfig, V1, type Api } from '../helpers/api.js'
import { until } from '../helpers/until.js'
import type { Statements } from '../../src/db/client.js'
import { databaseKinds, eachKind } from '../helpers/databases.js'
import { csvObjects, readCsv } from '../helpers/csv.js'
import { eventsAfter, lastEvent } from '../helpers/feed.js'
import { productBody } from '../helpers/fixtures.js'
import { products } from '../../src/collections/products/index.js'
import { defineCollection } from '../../src/resources/collection.js'

const V2 = '/api/v2'
const CSV = { accept: 'text/csv' }
const NDJSON = { accept: 'application/x-ndjson' }
/** Pages of 3 rows: every export below spans several. */
const SMALL_PAGES = { exports: { maxRows: 1_000_000, pageRows: 3 } }

const eachSmallPaged = (t: Test, fn: (t: Test, api: Api) => Promise<void>) =>
  eachKind(t, async (sub, kind) => fn(sub, await startApi(sub, kind, undefined, { config: SMALL_PAGES })))

/** NDJSON's lines, each parsed on its own. */
const ndjsonLines = (text: string) => {
  const lines = text.split('\n')
  const last = lines.pop()
  if (last !== '') throw new Error('NDJSON must end with a line feed')
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>)
}

const importCsv = (api: Api, path: string, text: string, headers: Record<string, string> = {}) =>
  api.request('POST', path, { body: text, headers: { 'content-type': 'text/csv', ...headers } })
const importNdjson = (api: Api, path: string, text: string, headers: Record<string, string> = {}) =>
  api.request('POST', path, { body: text, headers: { 'content-type': 'application/x-ndjson', ...headers } })

/** Values a CSV must quote, or carry as they are. */
const AWKWARD = ['Apron, 100% cotton', 'The "good" mug', 'Two\nlines', 'Carriage\r\nreturn', 'Ünïcödé ☕ 茶', ' spaced ', '=1+2']

t.test('CSV: the headers, a header row in schema order, RFC 4180 quoting read back by a separate reader', (t) =>
  eachSmallPaged(t, async (t, api) => {
    const bodies = AWKWARD.map((name) => productBody({ name, description: name, tags: ['a,b', 'c"d'] }))
    bodies.push(productBody({ name: 'Plain', description: '' }), productBody({ name: 'No description' }))
    const created = (await api.admin.post(`${V1}/products`, bodies)).body as { id: string }[]
    const answer = await api.admin.get(`${V2}/products?fields=name,description,price,cost,tags`, CSV)
    t.equal(answer.status, 200)
    t.equal(answer.headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
    t.equal(answer.headers.get('content-disposition'), 'attachment; filename="products.csv"')
    t.match(answer.headers.get('vary'), /Accept/)
    t.equal(answer.headers.get('etag'), null, 'an export has no validators')
    t.equal(answer.headers.get('link'), null, 'nor pages')
    t.notOk(answer.text.startsWith('\uFEFF'), 'UTF-8 without a byte order mark')
    const records = readCsv(answer.text)
    t.same(records[0], ['id', 'name', 'price.amount', 'price.currency', 'cost.amount', 'cost.currency', 'description', 'tags'], 'schema order, nested objects as dotted columns')
    const rows = csvObjects(answer.text)
    t.equal(rows.length, bodies.length, 'every row, past several pages of 3')
    t.same(rows.map((row) => row.id), created.map((item) => item.id), 'in the list order: by id')
    t.same(rows.map((row) => row.name), bodies.map((body) => body.name), 'commas, quotes, CR and LF, unicode and spaces come back as they were')
    t.equal(rows[0]!['price.amount'], '10')
    t.equal(rows[0]!['price.currency'], 'USD')
    t.equal(rows[0]!['cost.amount'], null, 'null is an empty field')
    t.equal(rows[AWKWARD.length]!.description, '', 'the empty string is "", apart from null')
    t.equal(rows[AWKWARD.length + 1]!.description, null)
    t.same(JSON.parse(rows[0]!.tags!), ['a,b', 'c"d'], 'arrays as JSON text')
    t.match(answer.text, /^id,name,.*\r\n/, 'records end in CRLF')
    const v1 = await api.admin.get(`${V1}/products?fields=price,cost`, CSV)
    t.same(readCsv(v1.text)[0], ['id', 'price', 'cost'], 'each version its own columns: v1 has amounts as numbers')
    const head = await api.admin.request('HEAD', `${V2}/products`, { headers: CSV })
    t.equal(head.status, 200)
    t.equal(head.headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
    t.equal(head.text, '')
    const none = await api.admin.get(`${V2}/products?name=nothing-like-this`, CSV)
    t.same(readCsv(none.text), [['id', 'name', 'sku', 'price.amount', 'price.currency', 'status']], 'no rows: the header alone')
  }),
)

t.test('NDJSON: a line per item, each the JSON list item, past several pages', (t) =>
  eachSmallPaged(t, async (t, api) => {
    const bodies = [...AWKWARD, 'Plain', 'Other'].map((name) => productBody({ name, tags: ['x'] }))
    await api.admin.post(`${V1}/products`, bodies)
    const answer = await api.anonymous.get(`${V1}/products?sort=name`, NDJSON)
    t.equal(answer.status, 200)
    t.equal(answer.headers.get('content-type'), 'application/x-ndjson')
    t.equal(answer.headers.get('content-disposition'), 'attachment; filename="products.ndjson"')
    const lines = ndjsonLines(answer.text)
    t.equal(lines.length, bodies.length)
    const page = (await api.anonymous.get(`${V1}/products?sort=name&size=100`)).body
    t.same(lines, page, 'the same items as the JSON list, in the same order')
    t.equal(answer.text.split('\n').length, bodies.length + 1, 'a line break inside a value is escaped: one line per item')
    t.equal((await api.anonymous.get(`${V1}/products?name=none`, NDJSON)).text, '', 'no rows: an empty body')
  }),
)

t.test('an export has the list filters, filter=, q=, sort and fields; page, size, cursor and include are refused', (t) =>
  eachSmallPaged(t, async (t, api) => {
    const names = ['Teapot', 'Tea cup', 'Mug', 'Kettle', 'Tea towel', 'Jug', 'Tray']
    await api.admin.post(`${V1}/products`, names.map((name, i) => productBody({ name, price: 10 + i, status: i % 2 ? 'active' : 'draft', stock: i })))
    const same = async (query: string) => {
      const exported = ndjsonLines((await api.admin.get(`${V1}/products?${query}`, NDJSON)).text)
      const listed = (await api.admin.get(`${V1}/products?${query}${query ? '&' : ''}size=100`)).body
      t.same(exported, listed, `?${query} exports what it lists`)
      return exported
    }
    t.equal((await same('status=active')).length, 3)
    t.equal((await same('price[gte]=12&sort=price&order=desc')).length, 5)
    t.same((await same('sort=name')).map((item) => item.name), [...names].sort())
    t.equal((await same('filter=' + encodeURIComponent('name : "tea" OR stock >= 6'))).length, 4)
    t.same((await same('q=tea')).map((item) => item.name).sort(), ['Tea cup', 'Tea towel'])
    await same('q=tea&sort=relevance')
    await same('sort=status,price&order=desc,asc')
    await same('fields=name,stock,rating_average')
    const refused = await api.admin.get(`${V1}/products?page=2&size=5&cursor=&include=reviews`, CSV)
    t.equal(refused.status, 400)
    t.equal(refused.headers.get('content-type'), 'application/json; charset=utf-8', 'errors are JSON')
    t.same(refused.body.error.details.map((d: { field: string }) => d.field), ['page', 'size', 'cursor', 'include'])
    t.match(refused.body.error.details[0].reason, /every matching row/)
    const unknown = await api.admin.get(`${V1}/products?colour=red`, CSV)
    t.equal(unknown.status, 400, 'an unknown filter as on the list')
    t.equal((await api.admin.get(`${V1}/products`, { accept: 'text/html' })).status, 406)
    t.equal((await api.admin.get(`${V1}/products`, { accept: 'text/csv;q=0.5, application/json' })).headers.get('content-type'), 'application/json; charset=utf-8', 'q-values: JSON preferred')
    t.equal((await api.admin.get(`${V1}/products`, { accept: 'application/json;q=0.5, text/csv' })).headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
  }),
)

t.test('sorted by a field that may be null, the keyset pages keep every row once: nulls last ascending, first descending', (t) =>
  eachKind(t, async (t, kind) => {
    // No shop collection sorts by a nullable field but webhook deliveries (next_attempt_at): products by description here.
    const described = defineCollection({ ...products.options, sortable: [...products.options.sortable!, 'description'] })
    const api = await startApi(t, kind, undefined, { collections: [described], config: SMALL_PAGES })
    const descriptions = ['b', null, 'a', null, 'c', null, null, 'a', null]
    const created = (await api.admin.post(`${V1}/products`, descriptions.map((description) => productBody({ description })))).body as { id: string }[]
    for (const order of ['asc', 'desc']) {
      const listed = (await api.admin.get(`${V1}/products?sort=description&order=${order}&fields=description&size=100`)).body
      const exported = ndjsonLines((await api.admin.get(`${V1}/products?sort=description&order=${order}&fields=description`, NDJSON)).text)
      t.same(exported, listed, `${order}: as the list orders them`)
      t.same(exported.map((item) => item.id).sort(), created.map((item) => item.id).sort(), `${order}: each row once`)
    }
    t.same(ndjsonLines((await api.admin.get(`${V1}/products?sort=description&fields=description`, NDJSON)).text).map((item) => item.description), ['a', 'a', 'b', 'c', null, null, null, null, null])
  }),
)

t.test('field and row rules apply to every row: no cost for non-admins, a customer exports only their orders', (t) =>
  eachDatabase(t, async (t, api) => {
    await api.admin.post(`${V1}/products`, [productBody({ cost: 4 }), productBody({ cost: 5 })])
    const admin = csvObjects((await api.admin.get(`${V2}/products`, { accept: 'text/csv' })).text)
    const anonymous = readCsv((await api.anonymous.get(`${V2}/products?fields=name,cost`, CSV)).text)
    t.same(anonymous[0], ['id', 'name'], 'a field the caller may not read has no column, even when asked for')
    const adminCost = csvObjects((await api.admin.get(`${V2}/products?fields=name,cost`, CSV)).text)
    t.same(adminCost.map((row) => row['cost.amount']), ['4', '5'])
    t.equal(admin.length, 2)
    const alice = await api.newUser()
    const bob = await api.newUser()
    const alices = [(await alice.api.post(`${V1}/orders`, {})).body.id, (await alice.api.post(`${V1}/orders`, {})).body.id]
    await bob.api.post(`${V1}/orders`, {})
    const mine = csvObjects((await alice.api.get(`${V1}/orders`, CSV)).text)
    t.same(mine.map((row) => row.id), alices, "only the caller's orders")
    t.same(csvObjects((await alice.api.get(`${V1}/orders?user_id=${bob.id}`, CSV)).text), [], "another's id filters to nothing")
    t.equal(csvObjects((await api.admin.get(`${V1}/orders`, CSV)).text).length, 3, 'an admin exports all')
    t.equal((await api.anonymous.get(`${V1}/orders`, CSV)).status, 401)
    const items = await alice.api.get(`${V1}/orders/${alices[0]}/items`, NDJSON)
    t.equal(items.status, 200, 'a nested list exports too')
    t.equal(items.headers.get('content-disposition'), 'attachment; filename="items.ndjson"')
    t.equal((await bob.api.get(`${V1}/orders/${alices[0]}/items`, NDJSON)).status, 403, "another's order's items: as the list")
  }),
)

t.test('EXPORT_MAX_ROWS: more matching rows is a 400 before anything is sent; exactly the limit is exported', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { exports: { maxRows: 4, pageRows: 2 } } })
  await api.admin.post(`${V1}/products`, [1, 2, 3, 4, 5].map((stock) => productBody({ stock })))
  const tooMany = await api.admin.get(`${V1}/products`, CSV)
  t.equal(tooMany.status, 400)
  t.equal(tooMany.body.error.code, 'EXPORT_TOO_LARGE')
  t.match(tooMany.body.error.message, /More than 4 items match \(EXPORT_MAX_ROWS\); narrow the export with filters/)
  t.equal(tooMany.headers.get('content-disposition'), null)
  const four = await api.admin.get(`${V1}/products?stock[lte]=4`, CSV)
  t.equal(four.status, 200)
  t.equal(csvObjects(four.text).length, 4)
  t.equal((await api.admin.get(`${V1}/products`)).status, 200, 'the JSON list is not limited by it')
})

t.test('CSV import: the array create from rows, cells by the fields\' types, dotted columns as objects, quoting as RFC 4180', (t) =>
  eachDatabase(t, async (t, api) => {
    const before = await lastEvent(api)
    const csv = [
      'name,sku,price.amount,price.currency,stock,status,description,tags',
      '"Apron, 100% cotton",APR-001,19.5,USD,3,active,"Says ""hi""",[]',
      'Plain,PLN-001,2,,,,"",',
      '"Two\r\nlines ☕",TWO-001,7,USD,0,draft,Ünïcödé 茶,"[""a,b"",""c""]"',
    ].join('\r\n')
    const created = await importCsv(api.admin, `${V2}/products`, `\uFEFF${csv}\r\n`)
    t.equal(created.status, 201)
    t.equal(created.headers.get('content-type'), 'application/json; charset=utf-8', 'answered as the array create answers')
    t.match(created.body, [
      { name: 'Apron, 100% cotton', sku: 'APR-001', price: { amount: 19.5, currency: 'USD' }, stock: 3, status: 'active', description: 'Says "hi"', tags: [] },
      { name: 'Plain', sku: 'PLN-001', price: { amount: 2, currency: 'USD' }, stock: 0, status: 'draft', description: '', tags: [] },
      { name: 'Two\r\nlines ☕', sku: 'TWO-001', price: { amount: 7 }, description: 'Ünïcödé 茶', tags: ['a,b', 'c'] },
    ], 'an empty field is left out (its default), "" is the empty string, a byte order mark is skipped')
    t.same(await eventsAfter(api, before), created.body.map((item: { id: string }) => `products.created ${item.id}`), 'one event per item, in order')
    const lf = await importCsv(api.admin, `${V1}/products`, 'name,sku,price\nLF line ends,LFE-001,3\n')
    t.equal(lf.status, 201, 'LF line ends too')
    t.equal(lf.body[0].price, 3, 'v1: amounts as numbers')
  }),
)

t.test('NDJSON import: a JSON object per line, blank lines skipped', (t) =>
  eachDatabase(t, async (t, api) => {
    const lines = [productBody({ name: 'One', tags: ['x'] }), productBody({ name: 'Two\nlines' })].map((body) => JSON.stringify(body))
    const created = await importNdjson(api.admin, `${V1}/products`, `${lines[0]}\r\n\n${lines[1]}\n`)
    t.equal(created.status, 201)
    t.same(created.body.map((item: { name: string }) => item.name), ['One', 'Two\nlines'])
    t.same(created.body[0].tags, ['x'])
  }),
)

t.test('import errors: the status and body of the array create, naming the item and its line', (t) =>
  eachDatabase(t, async (t, api) => {
    const path = `${V1}/products`
    const bad = await importCsv(api.admin, path, 'name,sku,price,stock\r\nGood,GOOD-001,1,1\r\n"Bad\r\nprice",BAD-001,abc,1.5\r\nWorse,bad sku,1,1\r\n')
    t.equal(bad.status, 422)
    t.equal(bad.body.error.code, 'VALIDATION_ERROR')
    t.same(bad.body.error.details, [
      { field: '[1].price', reason: 'must be a number (line 3)' },
      { field: '[1].stock', reason: 'must be an integer or null (line 3)' },
      { field: '[2].sku', reason: 'must match pattern "^[A-Z0-9-]{3,32}$" (line 5)' },
    ], 'every failing cell; a record spanning lines counts them: the next starts on line 5')
    const unknown = await importCsv(api.admin, path, 'name,sku,price,colour\r\nMug,MUG-001,1,red\r\n')
    t.equal(unknown.status, 422)
    t.same(unknown.body.error.details, [{ field: '[0].colour', reason: 'is not a known field (line 2)' }], 'an unknown column as an unknown field')
    const ragged = await importCsv(api.admin, path, 'name,sku,price\r\nMug,MUG-001\r\n')
    t.equal(ragged.status, 400)
    t.equal(ragged.body.error.code, 'BAD_REQUEST')
    t.equal(ragged.body.error.message, 'The CSV body cannot be read: line 2 has 2 fields; the header has 3.')
    const open = await importCsv(api.admin, path, 'name,sku,price\r\n"Mug,MUG-001,1\r\n')
    t.equal(open.status, 400)
    t.match(open.body.error.message, /line 2 has a quoted field that is never closed/)
    const quote = await importCsv(api.admin, path, 'name,sku,price\r\nThe "mug",MUG-001,1\r\n')
    t.match(quote.body.error.message, /line 2 has a quote inside a field that does not start with one/)
    t.same((await importCsv(api.admin, path, 'name,name,price\r\n')).body.error.details, [{ field: 'line 1', reason: '(the header) names "name" twice' }])
    t.equal((await importCsv(api.admin, path, 'name,sku,price.amount,price\r\n')).status, 400, 'an object both as one column and dotted')
    const empty = await importCsv(api.admin, path, '')
    t.equal(empty.status, 400)
    t.match(empty.body.error.message, /The CSV body is empty/)
    const headerOnly = await importCsv(api.admin, path, 'name,sku,price\r\n')
    t.equal(headerOnly.status, 422)
    t.same(headerOnly.body.error.details, [{ field: 'body', reason: 'must have at least 1 item' }])
    const notJson = await importNdjson(api.admin, path, `${JSON.stringify(productBody())}\n{"name": \n`)
    t.equal(notJson.status, 400)
    t.equal(notJson.body.error.code, 'MALFORMED_JSON')
    t.match(notJson.body.error.message, /^Line 2 of the NDJSON body is not valid JSON/)
    t.equal(notJson.body.error.details[0].field, 'line 2')
    const array = await importNdjson(api.admin, path, '[]\n')
    t.equal(array.status, 400)
    t.equal(array.body.error.message, 'Line 1 of the NDJSON body must be a JSON object.')
    await api.admin.post(path, productBody({ sku: 'TAKEN-001' }))
    const taken = await importNdjson(api.admin, path, [productBody(), productBody({ sku: 'TAKEN-001' })].map((body) => JSON.stringify(body)).join('\n'))
    t.equal(taken.status, 409)
    t.same(taken.body.error.details, [{ field: '[1].sku', reason: 'is already taken (line 2)' }])
    t.equal((await api.admin.get(path)).body.length, 1, 'all or nothing: none of the failed imports wrote anything')
    const latin1 = await importCsv(api.admin, path, 'name,sku,price\r\n', { 'content-type': 'text/csv; charset=iso-8859-1' })
    t.equal(latin1.status, 415)
    const put = await api.admin.request('PUT', `${path}/01890000-0000-7000-8000-000000000000`, { body: 'name\r\nx\r\n', headers: { 'content-type': 'text/csv' } })
    t.equal(put.status, 415, 'only a collection\'s POST imports')
    const customer = await api.newUser()
    t.equal((await importCsv(customer.api, path, 'name,sku,price\r\nMug,MUG-002,1\r\n')).status, 403, 'who may not create may not import')
    t.equal((await importCsv(api.anonymous, path, 'name,sku,price\r\nMug,MUG-002,1\r\n')).status, 401)
  }),
)

t.test('import caps and options: BULK_MAX_ITEMS, Idempotency-Key, Prefer: return=minimal, upserts, a nested collection', async (t) => {
  const api = await startApi(t, 'pglite', undefined, { config: { limits: { ...testConfig().limits, bulkMaxItems: 3 } } })
  const path = `${V1}/products`
  const rows = (n: number, prefix: string) => ['name,sku,price', ...Array.from({ length: n }, (_, i) => `Item ${i},${prefix}-${i},${i + 1}`)].join('\r\n')
  const tooMany = await importCsv(api.admin, path, rows(4, 'MANY'))
  t.equal(tooMany.status, 413)
  t.match(tooMany.body.error.message, /at most 3 items; this one has 4/)
  const key = { 'idempotency-key': 'import-1' }
  const first = await importCsv(api.admin, path, rows(2, 'KEY'), key)
  t.equal(first.status, 201)
  const again = await importCsv(api.admin, path, rows(2, 'KEY'), key)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.same(again.body, first.body, 'a retry gets the first answer; nothing is created twice')
  const minimal = await importCsv(api.admin, path, rows(1, 'MIN'), { prefer: 'return=minimal' })
  t.equal(minimal.status, 201)
  t.equal(minimal.text, '')
  const upsert = await importCsv(api.admin, `${path}?on_conflict=sku`, 'sku,name,price\r\nKEY-0,Renamed,9\r\nNEW-0,New,1\r\n', { prefer: 'resolution=merge-duplicates' })
  t.equal(upsert.status, 200, 'one changed, one created')
  t.same(upsert.body.map((item: { name: string }) => item.name), ['Renamed', 'New'])
  t.equal(upsert.body[0].id, first.body[0].id)
  const product = first.body[0].id
  const customer = await api.newUser()
  const reviews = await importNdjson(customer.api, `${path}/${product}/reviews`, '{"rating": 5, "body": "Lovely"}\n')
  t.equal(reviews.status, 201, 'a nested collection imports under its parent')
  t.match(reviews.body, [{ rating: 5, body: 'Lovely', product_id: product, author_id: customer.id }])
  t.equal((await importNdjson(customer.api, `${path}/01890000-0000-7000-8000-000000000000/reviews`, '{"rating": 5}\n')).status, 404, 'under an unknown parent: 404')
})

/** An export's rows without what the service sets (id, times, counts): what an import gives every item anew. */
const asGiven = (rows: Record<string, unknown>[]) =>
  rows.map(({ id: _id, created_at: _c, updated_at: _u, review_count: _r, rating_average: _a, ...given }) => given)

t.test('round trip: an export imports into a fresh database as equal items, as CSV and as NDJSON', (t) =>
  eachKind(t, async (t, kind) => {
    const source = await startApi(t, kind, undefined, { config: SMALL_PAGES })
    const bodies = AWKWARD.map((name, i) => productBody({ name, description: i % 2 ? name : null, tags: i % 3 ? ['a,b', `t${i}`] : [], cost: i % 2 ? 1.25 * i : null, stock: i, status: 'active' }))
    bodies.push(productBody({ name: 'Empty text', description: '' }))
    t.equal((await source.admin.post(`${V1}/products`, bodies)).status, 201)
    const fields = 'fields=name,sku,price,cost,stock,status,description,tags,review_count,created_at'
    for (const [format, accept, type] of [['CSV', 'text/csv', 'text/csv'], ['NDJSON', 'application/x-ndjson', 'application/x-ndjson']] as const) {
      const target = await startApi(t, kind)
      for (const version of [V1, V2]) {
        const exported = await source.admin.get(`${version}/products?${fields}`, { accept })
        t.equal(exported.status, 200)
        const imported = await target.admin.request('POST', `${version}/products${version === V2 ? '?on_conflict=sku' : ''}`, {
          body: exported.text,
          headers: { 'content-type': type, ...(version === V2 ? { prefer: 'resolution=merge-duplicates' } : {}) },
        })
        t.equal(imported.status, version === V1 ? 201 : 200, `${format} ${version}: the export is accepted as it is (v2: again, as upserts)`)
        const original = (await source.admin.get(`${version}/products?${fields}&size=100`)).body
        const copy = (await target.admin.get(`${version}/products?${fields}&size=100`)).body
        t.same(asGiven(copy), asGiven(original), `${format} ${version}: equal items`)
      }
    }
  }),
)

/**
 * The export's page statements (no count, no offset) on the service's reads; from the `from`-th
 * on, each waits for `wait()` first.
 */
function gatedPages(api: Api, from: number, wait: () => Promise<void>) {
  const state = { started: 0, settled: 0 }
  const reads = api.db.replica
  ;(api.db as { replica: Statements }).replica = {
    async query(text, params, name) {
      if (!/^SELECT .* ORDER BY .* LIMIT \d+$/.test(text) || text.includes('__total')) return reads.query(text, params, name)
      try {
        if (++state.started >= from) await wait()
        return await reads.query(text, params, name)
      } finally {
        state.settled++
      }
    },
  }
  return state
}

t.test('an export outlasts REQUEST_TIMEOUT_MS: the limit bounds each wait, not the whole export', async (t) => {
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { limits: { ...testConfig().limits, requestTimeoutMs: 400 }, exports: { maxRows: 100, pageRows: 2 } } })
  await api.admin.post(`${V1}/products`, Array.from({ length: 12 }, () => productBody()))
  // Each page waits 150 ms: the 7 pages take over a second, more than twice the request's limit.
  const pages = gatedPages(api, 1, () => new Promise((resolve) => setTimeout(resolve, 150)))
  const started = Date.now()
  const answer = await api.admin.get(`${V1}/products`, CSV)
  t.equal(answer.status, 200)
  t.equal(csvObjects(answer.text).length, 12, 'every row')
  t.ok(Date.now() - started >= 7 * 150, 'it took longer than a request may')
  t.equal(pages.started, 7, 'six full pages and an empty one')
})

t.test('a client that goes away stops the export: no page is read after it', async (t) => {
  let closed = 0
  const api = await startApi(t, databaseKinds()[0]!, (app) => app.addHook('onRequest', async (request, reply) => {
    if (request.headers.accept === 'text/csv') reply.raw.once('close', () => closed++)
  }), { config: { exports: { maxRows: 1000, pageRows: 1 } } })
  await api.admin.post(`${V1}/products`, Array.from({ length: 50 }, () => productBody()))
  const admin = await api.newUser({ roles: ['admin'] })
  // The first two pages come at once (the one read before the answer starts, and the next); the third waits.
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  const pages = gatedPages(api, 3, () => held)
  const abort = new AbortController()
  const response = await fetch(`${api.origin}${V1}/products`, { headers: { ...CSV, ...bearer(admin.token) }, signal: abort.signal })
  t.equal(response.status, 200)
  const reader = response.body!.getReader()
  t.match(new TextDecoder().decode((await reader.read()).value), /^id,name,sku/, 'the export has begun')
  abort.abort()
  await until('the service to see the client gone', async () => (closed > 0 ? true : undefined))
  const read = pages.started
  t.ok(read <= 4, `at most the pages under way when it went (${read} of 51)`)
  release()
  await until('the pages under way to end', async () => (pages.settled === pages.started ? true : undefined))
  for (let i = 0; i < 3; i++) t.equal((await api.admin.get(`${V1}/products?size=1`)).status, 200)
  t.equal(pages.started, read, 'no page read since')
})

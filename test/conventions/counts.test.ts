// Bounded counts (DESIGN "Scale"): exact up to COUNT_LIMIT; past it no X-Total-Count and no `last`
// link, unless the client sends `Prefer: count=exact` (RFC 7240). A list without filters has the
// table's kept count, exact at any size.
import t, { type Test } from 'tap'
import { startApi, V1, type Api, type Response } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'

const LIMIT = 5

/** A service counting up to LIMIT, with `count` products (names P0, P1, ...; every third archived). */
async function withProducts(t: Test, kind: string, count: number): Promise<Api> {
  const api = await startApi(t, kind as never, undefined, { config: { countLimit: LIMIT } })
  await api.db.withSession((s) =>
    s.exec(`INSERT INTO products (id, name, sku, price, status, created_at, updated_at)
            SELECT gen_random_uuid(), 'P' || i, 'COUNT-' || i, i, (ARRAY['active', 'active', 'archived'])[1 + i % 3]::product_status, now(), now()
              FROM generate_series(0, ${count - 1}) AS i`),
  )
  return api
}

/** The paging links as [rel, query] (v1 also links its successor version, which is not paging). */
const rels = (res: Response) =>
  [...(res.headers.get('link') ?? '').matchAll(/<([^>]+)>; rel="([a-z-]+)"/g)]
    .filter((m) => ['first', 'prev', 'next', 'last'].includes(m[2]!))
    .map((m) => [m[2]!, m[1]!.replace(/^.*\?/, '')])

for (const kind of databaseKinds()) {
  t.test(`${kind}: past COUNT_LIMIT a page has no X-Total-Count and no last link, and still a next one while rows follow`, async (t) => {
    const api = await withProducts(t, kind, 9)
    // Six of the nine are active: past the limit of five.
    const first = await api.anonymous.get(`${V1}/products?status=active&size=3`)
    t.equal(first.status, 200)
    t.equal(first.body.length, 3)
    t.equal(first.headers.get('x-total-count'), null, 'more than COUNT_LIMIT match: the total is not counted')
    t.same(rels(first), [['first', 'status=active&size=3&page=1'], ['next', 'status=active&size=3&page=2']], 'no last link')
    t.equal(first.headers.get('preference-applied'), null, 'nothing was asked for')
    t.match(first.headers.get('vary'), /\bPrefer\b/, 'a cache keeps the answers to Prefer apart')
    const last = await api.anonymous.get(`${V1}/products?status=active&size=4&page=2`)
    t.equal(last.body.length, 2)
    t.same(rels(last).map(([rel]) => rel), ['first', 'prev'], 'no next after the last row')
    const full = await api.anonymous.get(`${V1}/products?status=active&size=3&page=2`)
    t.same(rels(full).map(([rel]) => rel), ['first', 'prev'], 'a full page with nothing after it has no next either')
    const beyond = await api.anonymous.get(`${V1}/products?status=active&size=3&page=9`)
    t.same(beyond.body, [])
    t.same(rels(beyond), [['first', 'status=active&size=3&page=1'], ['prev', 'status=active&size=3&page=8']])
  })

  t.test(`${kind}: Prefer: count=exact counts every row, says so, and brings the last link back`, async (t) => {
    const api = await withProducts(t, kind, 9)
    const active = `${V1}/products?status=active&size=3`
    const exact = await api.anonymous.get(active, { prefer: 'count=exact' })
    t.equal(exact.headers.get('x-total-count'), '6')
    t.equal(exact.headers.get('preference-applied'), 'count=exact')
    t.same(rels(exact).map(([rel, query]) => `${rel} ${query}`), ['first status=active&size=3&page=1', 'next status=active&size=3&page=2', 'last status=active&size=3&page=2'])
    t.not(exact.headers.get('etag'), (await api.anonymous.get(active)).headers.get('etag'), 'the page with its total is another representation')
    for (const prefer of ['respond-async, COUNT="exact"; foo=bar', 'return=minimal,count=exact']) {
      const res = await api.anonymous.get(active, { prefer })
      t.equal(res.headers.get('x-total-count'), '6', `${prefer}: found among other preferences, in any case, quoted or not`)
    }
    for (const prefer of ['count=estimated', 'count', 'exact']) {
      const res = await api.anonymous.get(active, { prefer })
      t.equal(res.status, 200, `${prefer}: a preference is optional, never an error`)
      t.equal(res.headers.get('x-total-count'), null, `${prefer}: not honoured`)
      t.equal(res.headers.get('preference-applied'), null)
    }
    const cursor = await api.anonymous.get(`${active}&cursor=`, { prefer: 'count=exact' })
    t.equal(cursor.headers.get('x-total-count'), '6', 'cursor pages too')
    t.equal((await api.anonymous.get(`${active}&cursor=`)).headers.get('x-total-count'), null)
  })

  t.test(`${kind}: up to COUNT_LIMIT matching rows the total is exact, filters counted`, async (t) => {
    const api = await withProducts(t, kind, 8)
    const archived = await api.anonymous.get(`${V1}/products?status=archived&size=1`)
    t.equal(archived.headers.get('x-total-count'), '2', 'two of the eight match: counted')
    t.same(rels(archived).map(([rel]) => rel), ['first', 'next', 'last'])
    const five = await api.anonymous.get(`${V1}/products?price[lt]=5`)
    t.equal(five.headers.get('x-total-count'), String(LIMIT), 'exactly COUNT_LIMIT is still a total')
    const six = await api.anonymous.get(`${V1}/products?price[lt]=6`)
    t.equal(six.headers.get('x-total-count'), null, 'one more is past it')
    const cursor = await api.anonymous.get(`${V1}/products?status=archived&cursor=`)
    t.equal(cursor.headers.get('x-total-count'), '2', 'a cursor page carries the total too')
  })

  t.test(`${kind}: without filters the total is the table's kept count: exact past COUNT_LIMIT, after inserts, deletes and a truncation`, async (t) => {
    const api = await withProducts(t, kind, 9)
    const total = async () => (await api.admin.get(`${V1}/products?size=2`)).headers.get('x-total-count')
    t.equal(await total(), '9', 'nine rows inserted in one statement, past the limit of five: still exact')
    t.equal((await api.anonymous.get(`${V1}/products?size=2`)).headers.get('link')?.includes('rel="last"'), true, 'so the last link is there')
    const created = await api.admin.post(`${V1}/products`, { name: 'Tenth', sku: 'COUNT-TENTH', price: 1 })
    t.equal(await total(), '10', 'a create counts')
    t.equal((await api.admin.delete(`${V1}/products/${created.body.id}`)).status, 204)
    t.equal(await total(), '9', 'a delete too')
    await api.db.withSession((s) => s.exec(`DELETE FROM products WHERE name IN ('P0', 'P1')`))
    t.equal(await total(), '7', 'and a statement run by hand')
    await api.db.withSession((s) => s.exec('TRUNCATE products CASCADE'))
    t.equal(await total(), '0', 'a truncation starts again from nothing')
    const kept = await api.db.withSession((s) => s.query<{ n: string }>(`SELECT sum(n)::text AS n FROM row_counts WHERE table_name = 'products'`))
    t.equal(kept[0]!.n, '0')
    await api.db.withSession((s) => s.exec(`INSERT INTO products (id, name, sku, price) VALUES (gen_random_uuid(), 'A', 'COUNT-A', 1), (gen_random_uuid(), 'B', 'COUNT-B', 1); DELETE FROM row_counts WHERE table_name = 'products'`))
    t.equal(await total(), '2', 'a table whose count is not kept is counted')
  })

  t.test(`${kind}: a search pages the same by page and by cursor, both ways, with few or many matches`, async (t) => {
    // Names P0 to P29: `5` is in 3 of them (fewer than the limit of five: the page comes from the
    // matches the count read), `1` in 12 (more: the page is read from the table).
    const api = await withProducts(t, kind, 30)
    const names = (res: Response) => (res.body as { name: string }[]).map((p) => p.name)
    const linked = (res: Response, rel: string) => rels(res).find(([r]) => r === rel)?.[1]
    for (const [search, matches] of [['5', 3], ['1', 12]] as const) {
      for (const sort of ['', '&sort=name', '&sort=price&order=desc']) {
        const query = `name[contains]=${search}${sort}`
        const exact = await api.anonymous.get(`${V1}/products?${query}&size=100`, { prefer: 'count=exact' })
        const expected = names(exact)
        t.equal(expected.length, matches, `${query}: every match`)
        t.ok(expected.every((name) => name.includes(search)))
        const byPage: string[] = []
        for (let page = 1; page <= 7; page++) {
          const res = await api.anonymous.get(`${V1}/products?${query}&size=2&page=${page}`)
          t.equal(res.headers.get('x-total-count'), matches <= LIMIT ? String(matches) : null, `${query} page ${page}: the count`)
          byPage.push(...names(res))
        }
        t.same(byPage, expected, `${query}: by page`)
        const forward: string[] = []
        let res = await api.anonymous.get(`${V1}/products?${query}&size=2&cursor=`)
        for (let hops = 0; hops < 10; hops++) {
          forward.push(...names(res))
          const next = linked(res, 'next')
          if (!next) break
          res = await api.anonymous.get(`${V1}/products?${next}`)
        }
        t.same(forward, expected, `${query}: by cursor`)
        const last = names(res)
        const backward: string[] = []
        for (let hops = 0; hops < 10; hops++) {
          const prev = linked(res, 'prev')
          if (!prev) break
          res = await api.anonymous.get(`${V1}/products?${prev}`)
          backward.unshift(...names(res))
        }
        t.same([...backward, ...last], expected, `${query}: back by cursor to the first page, in the same order`)
      }
    }
  })
}

// `q=`: full-text search over the words a collection declares, ranked (DESIGN "Reading").
import t from 'tap'
import { products } from '../../src/collections/products/index.js'
import { decodeCursor, encodeCursor } from '../../src/resources/list-query/cursor.js'
import { RELEVANCE, type SortKey } from '../../src/resources/list-query/plan.js'
import { eachDatabase, V1, type Api, type Response } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

interface Found {
  id: string
  name: string
}

async function catalogue(api: Api): Promise<void> {
  const items = [
    { name: 'Blue mug', description: 'Stoneware, 350 ml.', tags: ['kitchen'] },
    { name: 'Teapot', description: 'Pours into any mug without a drip.', tags: ['kitchen', 'tea'] },
    { name: 'Tea towel', description: 'Cotton.', tags: ['mug-drying'] },
    { name: 'Espresso cups', description: 'Porcelain, running glaze.', tags: ['coffee'] },
    { name: 'Apron', description: null, tags: ['textile'] },
  ]
  for (const item of items) {
    const created = await api.admin.post(`${V1}/products`, productBody(item))
    if (created.status !== 201) throw new Error(created.text)
  }
}

const search = (api: Api, query: string): Promise<Response<Found[]>> => api.anonymous.get<Found[]>(`${V1}/products?${query}`)
const names = (page: Response<Found[]>) => page.body.map((item) => item.name)

t.test('q finds words, stemmed, best matches first: the name before the description before the tags', (t) =>
  eachDatabase(t, async (t, api) => {
    await catalogue(api)
    const mugs = await search(api, 'q=mugs')
    t.equal(mugs.status, 200)
    t.strictSame(names(mugs), ['Blue mug', 'Teapot', 'Tea towel'], 'name (A), description (B), tags (C)')
    t.equal(mugs.headers.get('x-total-count'), '3')
    t.strictSame(names(await search(api, 'q=cup')), ['Espresso cups'], 'a plural finds its singular')
    t.strictSame(names(await search(api, 'q=run')), ['Espresso cups'], 'and a verb its forms')
    t.strictSame(names(await search(api, `q=${encodeURIComponent('mug -teapot')}`)), ['Blue mug', 'Tea towel'], '-word leaves out')
    t.strictSame(names(await search(api, `q=${encodeURIComponent('"tea towel" or apron')}`)).sort(), ['Apron', 'Tea towel'], 'phrases and or')
    t.strictSame(names(await search(api, 'q=mug&sort=name')), ['Blue mug', 'Tea towel', 'Teapot'], 'another sort when asked for')
    t.strictSame(names(await search(api, `q=mug&filter=${encodeURIComponent('name : "tea"')}&fields=name`)), ['Teapot', 'Tea towel'], 'with the filters')
    t.strictSame(names(await search(api, 'q=kettle')), [], 'nothing found is an empty page')
  }),
)

t.test('whatever a search box sends is a search, never an error of the database', (t) =>
  eachDatabase(t, async (t, api) => {
    await catalogue(api)
    for (const text of ['"unbalanced', '&&& !!! ||', "'; DROP TABLE products; --", 'mug:*', '(mug', '-', 'or', '\\', '<->', '日本語']) {
      const page = await search(api, `q=${encodeURIComponent(text)}`)
      t.equal(page.status, 200, text)
    }
    t.equal((await search(api, '')).headers.get('x-total-count'), '5', 'the table is whole')
  }),
)

t.test('cursors page through the relevance order, every match once', (t) =>
  eachDatabase(t, async (t, api) => {
    await catalogue(api)
    const seen: string[] = []
    let next: string | undefined = `${V1}/products?q=mug&size=1&cursor=`
    while (next) {
      const page: Response<Found[]> = await api.anonymous.get<Found[]>(next)
      t.equal(page.status, 200)
      seen.push(...names(page))
      next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1]
    }
    t.strictSame(seen, ['Blue mug', 'Teapot', 'Tea towel'])
    const back = await search(api, 'q=mug&sort=relevance&order=asc')
    t.strictSame(names(back), ['Tea towel', 'Teapot', 'Blue mug'], 'worst first when asked for')
  }),
)

t.test('q and relevance are refused where they cannot be answered', (t) =>
  eachDatabase(t, async (t, api) => {
    const cases: [string, string, RegExp][] = [
      [`${V1}/products?sort=relevance`, 'sort', /relevance needs q/],
      [`${V1}/products?q=`, 'q', /must be words to search for/],
      [`${V1}/products?q=${'a'.repeat(501)}`, 'q', /at most 500 characters/],
      [`${V1}/products?q=a&q=b`, 'q', /at most once/],
      [`${V1}/users?q=ada`, 'q', /no full-text search/],
    ]
    for (const [path, parameter, reason] of cases) {
      const refused = await api.admin.get(path)
      t.equal(refused.status, 400, path.slice(0, 60))
      t.equal(refused.body.error.details[0].field, parameter)
      t.match(refused.body.error.details[0].reason, reason)
    }
  }),
)

t.test('the stored words are the declared fields at their declared weights, after a create and a change', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/products`, productBody({ name: 'Mug', description: 'Heavy stoneware.', tags: ['kitchen', 'tea time'] }))
    await api.admin.patch(`${V1}/products/${created.body.id}`, { description: 'Light porcelain.' })
    const expression = Object.entries(products.options.textSearch!)
      .map(([field, weight]) => {
        const text = `coalesce(${products.field.get(field)!.kind === 'string[]' ? `array_to_string("${field}", ' ')` : `"${field}"`}, '')`
        return `setweight(to_tsvector('english', ${text}), '${weight}')`
      })
      .join(' || ')
    const [row] = await api.db.query<{ same: boolean; words: string }>(`SELECT "search" = (${expression}) AS same, "search"::text AS words FROM products WHERE id = $1`, [created.body.id])
    t.ok(row!.same, `the trigger keeps ${expression}`)
    t.match(row!.words, /'porcelain':\d+B/, 'the change is in')
    t.notMatch(row!.words, /stoneware/, 'and what it replaced is gone')
  }),
)

t.test('a cursor keeps a rank of any size: a tiny one is written with an exponent and read back', (t) => {
  const sort: SortKey[] = [{ field: RELEVANCE, direction: 'desc' }, { field: products.listSpec.id, direction: 'asc' }]
  for (const rank of [0.6079271, 4.2e-10, 1e-20]) {
    const cursor = encodeCursor(sort, { relevance: rank, id: '01a21b28-1281-74c5-924c-501d15605be8' }, false)
    const position = decodeCursor(cursor, sort)
    t.ok(position, `${rank}`)
    t.equal(Number(position!.values[0]), rank, `${rank} reads back exactly`)
  }
  t.notOk(decodeCursor(Buffer.from(JSON.stringify({ s: 'relevance:desc,id:asc', v: ['1; DROP', '01a21b28-1281-74c5-924c-501d15605be8'] })).toString('base64url'), sort), 'anything else is no cursor')
  t.end()
})

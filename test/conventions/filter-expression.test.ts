// `filter=` (AIP-160's grammar): AND, OR, NOT and parentheses over the filterable fields, typed as
// the bracket filters are, translated to SQL with parameters (DESIGN "Reading").
import fc from 'fast-check'
import t from 'tap'
import { shopCollections } from '../../src/collections/index.js'
import { MAX_COMPARISONS, parseFilterExpression } from '../../src/resources/list-query/filter-expression.js'
import { eachDatabase, V1, type Api, type Response } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

const spec = shopCollections('open').find((collection) => collection.name === 'products')!.listSpec

interface Item {
  name: string
  price: number
  stock: number
  status: string
  description: string | null
  tags: string[]
}

const ITEMS: Item[] = [
  { name: 'Blue mug', price: 8, stock: 5, status: 'active', description: 'Stoneware.', tags: ['kitchen'] },
  { name: 'Red mug', price: 12, stock: 0, status: 'draft', description: null, tags: ['kitchen', 'red'] },
  { name: 'Teapot', price: 34, stock: 2, status: 'active', description: 'Cast iron.', tags: [] },
  { name: 'Apron', price: 19, stock: 9, status: 'archived', description: null, tags: ['textile'] },
  { name: 'Tea towel', price: 9, stock: 40, status: 'draft', description: 'Cotton "waffle".', tags: ['kitchen', 'textile'] },
]

/** Each expression, and which of ITEMS it keeps: what the SQL must agree with. */
const EXPRESSIONS: [string, (item: Item) => boolean][] = [
  ['status = "draft" OR price < 10', (i) => i.status === 'draft' || i.price < 10],
  ['status = "active" AND price < 10', (i) => i.status === 'active' && i.price < 10],
  ['NOT status = "active"', (i) => i.status !== 'active'],
  ['-status = "active"', (i) => i.status !== 'active'],
  ['(status = "draft" OR status = "archived") AND stock > 0', (i) => (i.status === 'draft' || i.status === 'archived') && i.stock > 0],
  ['status = "draft" OR (price >= 19 AND NOT name : "pot")', (i) => i.status === 'draft' || (i.price >= 19 && !i.name.toLowerCase().includes('pot'))],
  ['name : "MUG"', (i) => i.name.toLowerCase().includes('mug')],
  ['tags : "kitchen" AND tags : "textile"', (i) => i.tags.includes('kitchen') && i.tags.includes('textile')],
  ['description = null', (i) => i.description === null],
  ['description != null AND price <= 9', (i) => i.description !== null && i.price <= 9],
  ['description : "\\"waffle\\""', (i) => i.description?.includes('"waffle"') === true],
  ['stock != 0', (i) => i.stock !== 0],
  ['NOT (NOT (price > 10))', (i) => i.price > 10],
]

async function seed(api: Api): Promise<void> {
  for (const item of ITEMS) {
    const created = await api.admin.post(`${V1}/products`, productBody({ ...item }))
    if (created.status !== 201) throw new Error(created.text)
  }
}

const names = (items: { name: string }[]) => items.map((item) => item.name).sort()

t.test('each expression keeps the items it says, on both databases, as a page and counted', (t) =>
  eachDatabase(t, async (t, api) => {
    await seed(api)
    for (const [expression, keeps] of EXPRESSIONS) {
      const page = await api.anonymous.get(`${V1}/products?filter=${encodeURIComponent(expression)}&size=100`)
      t.equal(page.status, 200, `${expression}: ${page.text.slice(0, 200)}`)
      t.strictSame(names(page.body), names(ITEMS.filter(keeps)), expression)
      t.equal(page.headers.get('x-total-count'), String(ITEMS.filter(keeps).length), `${expression}: counted`)
    }
  }),
)

t.test('filter combines with the bracket filters by AND, and pages by cursor in any sort', (t) =>
  eachDatabase(t, async (t, api) => {
    await seed(api)
    const both = await api.anonymous.get(`${V1}/products?status=draft&filter=${encodeURIComponent('price > 10 OR stock > 10')}`)
    t.strictSame(names(both.body), ['Red mug', 'Tea towel'])
    const filter = encodeURIComponent('status = "draft" OR status = "active"')
    const seen: string[] = []
    let next: string | undefined = `${V1}/products?filter=${filter}&sort=price&order=desc&size=2&cursor=`
    while (next) {
      const page: Response<Item[]> = await api.anonymous.get<Item[]>(next)
      t.equal(page.status, 200)
      seen.push(...page.body.map((item) => item.name))
      next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1]
    }
    t.strictSame(seen, ['Teapot', 'Red mug', 'Tea towel', 'Blue mug'], 'every match once, in order, across pages')
  }),
)

t.test('a filter that cannot be read is a 400 naming filter, the position and what was expected', (t) =>
  eachDatabase(t, async (t, api) => {
    const cases: [string, RegExp][] = [
      ['price < 10 AND status = "draft" OR stock > 3', /^at 33: OR after AND at one level: add parentheses/],
      ['price', /^at 6: expected a comparison \(= != < <= > >= :\) after price, found the end/],
      ['price = ', /^at 9: expected a value after price =/],
      ['(price = 1', /^at 11: expected \) or AND or OR, found the end/],
      ['name = "open', /^at 8: a string is not closed/],
      ['nmae = "x"', /^at 1: cannot filter by "nmae" \(did you mean name\?\); filterable fields: name, sku/],
      ['cost < 5', /^at 1: cannot filter by "cost"/],
      ['status < "draft"', /^at 8: < is not supported on status; use one of = !=/],
      ['price = "cheap"', /^at 9: price must be a decimal number/],
      ['created_at > "yesterday"', /^at 14: created_at must be an RFC 3339 date-time/],
      ['price = null', /price is never null/],
      ['status : "dr"', /: is not supported on status/],
      ['((((((price = 1))))))', /nested more than 5 deep/],
      [Array.from({ length: MAX_COMPARISONS + 1 }, () => 'stock = 1').join(' OR '), /more than 20 comparisons/],
      ['x'.repeat(2001), /must be at most 2000 characters/],
      ['', /must be an expression/],
      ['price = 1 price = 2', /^at 11: expected AND, OR or the end, found "price"/],
      ['stock = 5 ; DROP TABLE products', /^at 11: unexpected ";"/],
    ]
    for (const [expression, reason] of cases) {
      const refused = await api.anonymous.get(`${V1}/products?filter=${encodeURIComponent(expression)}`)
      t.equal(refused.status, 400, expression.slice(0, 60))
      t.equal(refused.body.error.code, 'INVALID_PARAMETER')
      t.equal(refused.body.error.details[0].field, 'filter')
      t.match(refused.body.error.details[0].reason, reason, expression.slice(0, 60))
    }
    const twice = await api.anonymous.get(`${V1}/products?filter=stock%3D1&filter=stock%3D2`)
    t.match(twice.body.error.details, [{ field: 'filter', reason: 'must be given at most once' }])
  }),
)

t.test('text in a filter is a value, never SQL: quotes, comments and operators find what they say', (t) =>
  eachDatabase(t, async (t, api) => {
    await seed(api)
    const hostile = [`x' OR '1'='1`, `"; DROP TABLE products; --`, `%`, `_`, `\\`, `' UNION SELECT password_hash FROM users --`]
    for (const text of hostile) {
      const quoted = `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`
      const page = await api.anonymous.get(`${V1}/products?filter=${encodeURIComponent(`name : ${quoted} OR name = ${quoted}`)}`)
      t.equal(page.status, 200, text)
      t.strictSame(page.body, [], `${text}: matches no name`)
    }
    t.equal((await api.anonymous.get(`${V1}/products`)).headers.get('x-total-count'), String(ITEMS.length), 'the table is whole')
  }),
)

// Total: whatever the text, an expression is a filter or a reason, never an exception; and every
// expression the grammar makes (within the limits) is a filter.
t.test('the parser ends every input in a filter or a reason, and takes every expression of the grammar', (t) => {
  const pieces = fc.constantFrom('price', 'stock', 'status', 'name', 'tags', 'description', 'nope', 'AND', 'OR', 'NOT', '-', '(', ')', '=', '!=', '<', '<=', '>', '>=', ':', '"draft"', '"a\\"b', '"', '12', '-3', '1.5', 'true', 'null', ' ', '\\', '.', 'é')
  const texts = fc.oneof(fc.string({ maxLength: 60 }), fc.array(pieces, { maxLength: 30 }).map((parts) => parts.join(' ')), fc.array(pieces, { maxLength: 30 }).map((parts) => parts.join('')))
  fc.assert(
    fc.property(texts, (text) => {
      const result = parseFilterExpression(text, spec)
      return result.ok ? typeof result.filter.kind === 'string' : /^(at \d+: |must )/.test(result.reason)
    }),
    { numRuns: 3000, seed: 25 },
  )
  const comparison = fc.oneof(
    fc.tuple(fc.constantFrom('price', 'stock'), fc.constantFrom('=', '!=', '<', '<=', '>', '>='), fc.integer({ min: 0, max: 999 })).map(([f, op, n]) => `${f} ${op} ${n}`),
    fc.tuple(fc.constantFrom('=', '!='), fc.constantFrom('draft', 'active', 'archived')).map(([op, v]) => `status ${op} "${v}"`),
    fc.string({ maxLength: 12 }).map((text) => `name : "${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`),
    fc.constantFrom('description = null', 'description != null', 'tags : "kitchen"'),
  )
  const expression = (depth: number): fc.Arbitrary<string> =>
    depth === 0
      ? comparison
      : fc.oneof(
          comparison,
          expression(depth - 1).map((inner) => `NOT (${inner})`),
          fc.tuple(fc.constantFrom(' AND ', ' OR '), fc.array(expression(depth - 1), { minLength: 2, maxLength: 3 })).map(([joiner, terms]) => `(${terms.join(joiner)})`),
        )
  fc.assert(
    fc.property(expression(2), (text) => parseFilterExpression(text, spec).ok),
    { numRuns: 2000, seed: 25 },
  )
  t.pass('3,000 texts ended in a filter or a reason; 2,000 expressions of the grammar parsed')
  t.end()
})

t.test('a relation\'s field: through a parent or a reference, any-of through children, only among related items the caller may read', (t) =>
  eachDatabase(t, async (t, api) => {
    const ada = await api.newUser({ name: 'Ada' })
    const bob = await api.newUser({ name: 'Bob' })
    const mug = (await api.admin.post(`${V1}/products`, productBody({ name: 'Mug', status: 'active' }))).body
    const pot = (await api.admin.post(`${V1}/products`, productBody({ name: 'Teapot', status: 'active' }))).body
    await ada.api.post(`${V1}/products/${mug.id}/reviews`, { rating: 5 })
    await bob.api.post(`${V1}/products/${mug.id}/reviews`, { rating: 2 })
    await bob.api.post(`${V1}/products/${pot.id}/reviews`, { rating: 3 })
    const by = (expression: string, as: Api = api.anonymous) => as.get(`${V1}/products/${mug.id}/reviews?filter=${encodeURIComponent(expression)}`)
    const adas = await by('author.name = "Ada"', bob.api)
    t.equal(adas.status, 200)
    t.strictSame(adas.body.map((review: { rating: number }) => review.rating), [5])
    t.strictSame((await by('author.name = "Ada"')).body, [], 'users are for signed-in callers: an anonymous filter through them finds nothing')
    t.strictSame((await by('NOT author.name = "Ada"', bob.api)).body.map((review: { rating: number }) => review.rating), [2])
    const liked = await api.anonymous.get(`${V1}/products?filter=${encodeURIComponent('reviews.rating >= 4')}`)
    t.strictSame(liked.body.map((product: { name: string }) => product.name), ['Mug'], 'some review of it has 4 or more')
    const mixed = await api.anonymous.get(`${V1}/products?filter=${encodeURIComponent('reviews.rating = 3 OR name = "Mug"')}`)
    t.strictSame(mixed.body.map((product: { name: string }) => product.name).sort(), ['Mug', 'Teapot'])
    // Bob's orders are the only ones he lists; a filter through their items cannot reach Ada's.
    const adaOrder = (await ada.api.post(`${V1}/orders`, {})).body
    await ada.api.post(`${V1}/orders/${adaOrder.id}/items`, { product_id: mug.id, quantity: 7 })
    const bobOrder = (await bob.api.post(`${V1}/orders`, {})).body
    await bob.api.post(`${V1}/orders/${bobOrder.id}/items`, { product_id: pot.id, quantity: 1 })
    const big = (as: Api) => as.get(`${V1}/orders?filter=${encodeURIComponent('items.quantity > 5')}`)
    t.strictSame((await big(bob.api)).body, [])
    t.strictSame((await big(api.admin)).body.map((order: { id: string }) => order.id), [adaOrder.id])
    const refused: [string, RegExp][] = [
      ['author.email = "ada@shop.test"', /cannot filter by "author.email"; filterable fields of author: name/],
      ['writer.name = "Ada"', /no relation "writer"; relations: product, author/],
      ['author.name.first = "A"', /one dot at most/],
      ['author.nmae = "A"', /did you mean author.name\?/],
    ]
    for (const [expression, reason] of refused) {
      const answer = await by(expression, api.admin)
      t.equal(answer.status, 400, expression)
      t.match(answer.body.error.details[0].reason, reason, expression)
    }
  }),
)

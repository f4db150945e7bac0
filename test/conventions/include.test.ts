// `include=`: related items embedded in one statement, under the rules of their own collection
// (DESIGN "Reading: fields, include, filter expressions, search").
import t from 'tap'
import type { Statements } from '../../src/db/client.js'
import { eachDatabase, startApi, V1, type Api, type TestUser } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const V2 = '/api/v2'

async function created(api: Api, path: string, body: unknown): Promise<Record<string, any>> {
  const answer = await api.post(path, body)
  if (answer.status !== 201) throw new Error(`${path}: ${answer.text}`)
  return answer.body
}

/** A shop: two products, reviews by two customers, and an order of each with items. */
async function shop(api: Api) {
  const mug = await created(api.admin, `${V1}/products`, productBody({ name: 'Mug', status: 'active', price: 12.5, cost: 4 }))
  const pot = await created(api.admin, `${V1}/products`, productBody({ name: 'Teapot', status: 'active', price: 34, cost: 15 }))
  const ada = await api.newUser({ name: 'Ada' })
  const bob = await api.newUser({ name: 'Bob' })
  const cy = await api.newUser({ name: 'Cy' })
  const reviews = [
    await created(ada.api, `${V1}/products/${mug.id}/reviews`, { rating: 5, body: 'Lovely.' }),
    await created(bob.api, `${V1}/products/${mug.id}/reviews`, { rating: 3, body: 'Fine.' }),
    await created(cy.api, `${V1}/products/${mug.id}/reviews`, { rating: 4, body: 'Good.' }),
  ]
  const orderOf = async (user: TestUser, product: Record<string, any>, quantity: number) => {
    const order = await created(user.api, `${V1}/orders`, {})
    await created(user.api, `${V1}/orders/${order.id}/items`, { product_id: product.id, quantity })
    return order
  }
  return { mug, pot, ada, bob, reviews, adaOrder: await orderOf(ada, mug, 1), bobOrder: await orderOf(bob, pot, 2) }
}

/** Counts the statements the service's reads send from here on (reads go to `db.replica`). */
function countReads(api: Api): { count: number } {
  const seen = { count: 0 }
  const reads = api.db.replica
  ;(api.db as { replica: Statements }).replica = {
    query: (text, params, name) => {
      seen.count++
      return reads.query(text, params, name)
    },
  }
  return seen
}

t.test('children, capped and in their order; a parent; a reference: each as its summary, in one statement', (t) =>
  eachDatabase(t, async (t, api) => {
    const { mug, pot, reviews } = await shop(api)
    const reads = countReads(api)
    const page = await api.anonymous.get(`${V1}/products?include=reviews&sort=name`)
    t.equal(page.status, 200)
    t.equal(reads.count, 1, 'the page and every embedded item: one statement')
    const [first, second] = page.body
    t.equal(first.id, mug.id)
    t.strictSame(first.reviews.map((review: { id: string }) => review.id), reviews.map((review) => review.id), 'in their default order')
    t.strictSame(Object.keys(first.reviews[0]).sort(), ['author_id', 'id', 'rating', 'title'].filter((name) => name in first.reviews[0]).sort())
    t.strictSame(second.reviews, [], 'none is an empty list')
    t.equal(second.id, pot.id)
    const capped = await api.anonymous.get(`${V1}/products/${mug.id}?include=reviews&include[reviews][size]=2`)
    t.strictSame(capped.body.reviews.map((review: { id: string }) => review.id), reviews.slice(0, 2).map((review) => review.id))
    const parent = await api.anonymous.get(`${V1}/products/${mug.id}/reviews?include=product`)
    t.ok(parent.body.every((review: { product: { id: string } }) => review.product.id === mug.id))
    t.strictSame(Object.keys(parent.body[0].product), ['id', 'name', 'sku', 'price', 'status'], "the product's summary")
    // v2 shows amounts its own way, in embedded items too.
    const v2 = await api.anonymous.get(`${V2}/products/${mug.id}/reviews?include=product`)
    t.strictSame(v2.body[0].product.price, { amount: 12.5, currency: 'USD' })
  }),
)

t.test("embedded items obey their collection's rules: rows and fields the caller may not read stay out", (t) =>
  eachDatabase(t, async (t, api) => {
    const { mug, ada, bob, adaOrder, bobOrder } = await shop(api)
    // Users are read by signed-in callers: an anonymous reader gets null in place of an author.
    const anonymous = await api.anonymous.get(`${V1}/products/${mug.id}/reviews?include=author`)
    t.ok(anonymous.body.every((review: { author: unknown }) => review.author === null))
    const signedIn = await bob.api.get(`${V1}/products/${mug.id}/reviews?include=author&fields[author]=name,email`)
    const byAuthor = new Map(signedIn.body.map((review: { author: { id: string } }) => [review.author.id, review.author]))
    t.strictSame(byAuthor.get(bob.id), { id: bob.id, name: 'Bob', email: bob.email }, 'his own email')
    t.strictSame(byAuthor.get(ada.id), { id: ada.id, name: 'Ada' }, "not another's")
    // Bob's orders embed Bob's items and their products, never Ada's.
    const bobs = await bob.api.get(`${V1}/orders?include=items.product`)
    t.equal(bobs.status, 200)
    t.strictSame(bobs.body.map((order: { id: string }) => order.id), [bobOrder.id])
    t.equal(bobs.body[0].items.length, 1)
    t.equal(bobs.body[0].items[0].product.name, 'Teapot')
    t.notOk('cost' in bobs.body[0].items[0].product)
    const costs = await bob.api.get(`${V1}/orders/${bobOrder.id}/items?include=product&fields[product]=name,cost`)
    t.strictSame(costs.body[0].product, { id: costs.body[0].product.id, name: 'Teapot' }, 'cost is for admins')
    const admin = await api.admin.get(`${V1}/orders/${bobOrder.id}/items?include=product&fields[product]=name,cost`)
    t.equal(admin.body[0].product.cost, 15)
    const all = await api.admin.get(`${V1}/orders?include=items`)
    t.strictSame(all.body.map((order: { id: string }) => order.id).sort(), [adaOrder.id, bobOrder.id].sort(), 'an admin embeds everybody’s')
    const order = await bob.api.get(`${V1}/orders/${bobOrder.id}/items?include=order`)
    t.equal(order.body[0].order.id, bobOrder.id)
    t.equal((await ada.api.get(`${V1}/orders/${bobOrder.id}?include=items`)).status, 403, "another's order stays refused")
  }),
)

t.test("an item's ETag changes when what it embeds does; 304 while it does not", (t) =>
  eachDatabase(t, async (t, api) => {
    const { mug, ada, reviews } = await shop(api)
    const path = `${V1}/products/${mug.id}/reviews/${reviews[0]!.id}`
    const before = await ada.api.get(`${path}?include=author`)
    const plain = await ada.api.get(path)
    t.not(before.headers.get('etag'), plain.headers.get('etag'))
    t.equal(before.headers.get('last-modified'), null, "the item's own time says nothing of what it embeds")
    t.equal((await ada.api.get(`${path}?include=author`, { 'if-none-match': before.headers.get('etag')! })).status, 304)
    await ada.api.patch(`${V1}/users/${ada.id}`, { name: 'Ada L.' })
    const after = await ada.api.get(`${path}?include=author`, { 'if-none-match': before.headers.get('etag')! })
    t.equal(after.status, 200, 'the author changed')
    t.equal(after.body.author.name, 'Ada L.')
    t.equal((await ada.api.get(path)).headers.get('etag'), plain.headers.get('etag'), 'the review itself did not')
    // If-Match is about the item's version, whatever it embedded.
    const changed = await ada.api.patch(path, { rating: 4 }, { 'if-match': after.headers.get('etag')! })
    t.equal(changed.status, 200)
  }),
)

t.test('an include the collection cannot answer is a 400 naming the parameter', (t) =>
  eachDatabase(t, async (t, api) => {
    const { mug } = await shop(api)
    const cases: [string, string, RegExp][] = [
      ['include=nope', 'include', /products has no relation "nope"; relations: reviews/],
      ['include=reviews.author.items', 'include', /one dotted step deep at most/],
      ['include=reviews,', 'include', /comma-separated list of relations/],
      ['include=reviews&include=reviews', 'include', /at most once/],
      ['include=reviews&include[reviews][size]=0', 'include[reviews][size]', /from 1 to 100/],
      ['include=reviews&include[reviews][size]=101', 'include[reviews][size]', /from 1 to 100/],
      ['include=reviews&fields[reviews]=stars', 'fields[reviews]', /has no field "stars"/],
      ['fields[reviews]=rating', 'fields[reviews]', /needs include=/],
      ['include=reviews&fields[author]=name', 'fields[author]', /names no relation this include embeds/],
      ['include=reviews.author,reviews.product', 'include', /embeds one relation below reviews/],
    ]
    for (const [query, parameter, reason] of cases) {
      for (const path of [`${V1}/products`, `${V1}/products/${mug.id}`]) {
        const refused = await api.anonymous.get(`${path}?${query}`)
        t.equal(refused.status, 400, `${path}?${query}`)
        t.equal(refused.body.error?.details[0].field, parameter, query)
        t.match(refused.body.error?.details[0].reason, reason, query)
      }
    }
    const order = await api.admin.post(`${V1}/orders`, {})
    const many = await api.admin.get(`${V1}/orders/${order.body.id}/items?include=order,product,order.items,product.reviews`)
    t.equal(many.status, 400)
    t.match(many.body.error.details[0].reason, /at most 3 relations/)
    const one = await api.admin.get(`${V1}/orders/${order.body.id}/items?include=product&include[product][size]=2`)
    t.match(one.body.error.details[0].reason, /product is one item, not a list/)
  }),
)

t.test('a reference to a collection the service does not serve is no relation there', async (t) => {
  const { products } = await import('../../src/collections/products/index.js')
  const { reviews } = await import('../../src/collections/reviews/index.js')
  const api = await startApi(t, databaseKinds()[0]!, undefined, { collections: [products, reviews] })
  const mug = await created(api.admin, `${V1}/products`, productBody())
  const refused = await api.anonymous.get(`${V1}/products/${mug.id}/reviews?include=author`)
  t.equal(refused.status, 400)
  t.match(refused.body.error.details[0].reason, /has no relation "author"; relations: product$/)
  t.equal((await api.anonymous.get(`${V1}/products/${mug.id}/reviews?include=product`)).status, 200)
})

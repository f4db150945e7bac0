/**
 * The demo shop the docs' examples use: an admin, four customers, six products, reviews and two
 * orders. Written through the API (app.inject), so every rule holds as for any client: validation,
 * stock, totals, and one event per change in the outbox. Idempotent: what exists is left as it is.
 */
import type { FastifyInstance } from 'fastify'
import type { Database } from '../db/client.js'
import { accounts } from '../db/accounts.js'
import { hashPassword } from '../auth/passwords.js'
import { newSecret, secretHash } from '../auth/secrets.js'

/** The demo's admin, unless the service's own (ADMIN_EMAIL) is given. */
export const DEMO_ADMIN = { email: 'admin@shop.example', password: 'a long admin password', name: 'Administrator' }

/** The customers; their passwords are in the docs, so they are demo accounts only. */
export const DEMO_CUSTOMERS = [
  { key: 'ada', name: 'Ada', email: 'ada@shop.example', password: 'a long password for Ada' },
  { key: 'bob', name: 'Bob', email: 'bob@shop.example', password: 'a long password for Bob' },
  { key: 'cy', name: 'Cy', email: 'cy@shop.example', password: 'a long password for Cy' },
  { key: 'dee', name: 'Dee', email: 'dee@shop.example', password: 'a long password for Dee' },
] as const

type Customer = (typeof DEMO_CUSTOMERS)[number]['key']

const PRODUCTS = [
  { name: 'Mug', sku: 'MUG-001', price: 12.5, cost: 4.1, stock: 25, status: 'active', tags: ['kitchen', 'coffee'], description: 'Stoneware, 350 ml.' },
  { name: 'Teapot', sku: 'TEA-001', price: 34, cost: 12, stock: 8, status: 'active', tags: ['kitchen', 'tea'], description: 'Cast iron, 1.2 l.' },
  { name: 'Tea towel', sku: 'TOW-001', price: 8.9, cost: 2.5, stock: 40, status: 'active', tags: ['kitchen'], description: null },
  { name: 'Espresso cup', sku: 'CUP-002', price: 9.5, cost: 3, stock: 30, status: 'active', tags: ['coffee'], description: 'Porcelain, 90 ml.' },
  { name: 'Old kettle', sku: 'KET-001', price: 25, cost: 9, stock: 0, status: 'archived', tags: ['kitchen'], description: null },
  { name: 'Apron, 100% cotton', sku: 'APR-001', price: 19, cost: 6, stock: 12, status: 'draft', tags: ['kitchen', 'textile'], description: null },
] as const

const REVIEWS: readonly { sku: string; by: Customer; rating: number; title: string; body: string | null }[] = [
  { sku: 'MUG-001', by: 'ada', rating: 5, title: 'Holds a whole pot', body: 'My tea stays hot to the last sip.' },
  { sku: 'MUG-001', by: 'bob', rating: 4, title: 'Solid', body: null },
  { sku: 'MUG-001', by: 'cy', rating: 4, title: 'Good handle', body: 'Fits a big hand.' },
  { sku: 'TEA-001', by: 'dee', rating: 3, title: 'Heavy', body: 'Pours well, but it is heavy when full.' },
]

/** Orders by their notes (how a second run finds them); `paid` orders are paid, which takes their stock. */
const ORDERS: readonly { by: Customer; note: string; items: { sku: string; quantity: number }[]; paid: boolean }[] = [
  { by: 'ada', note: 'Gift wrap, please.', items: [{ sku: 'MUG-001', quantity: 1 }], paid: true },
  { by: 'bob', note: 'Leave it with the neighbour.', items: [{ sku: 'TOW-001', quantity: 2 }], paid: false },
]

/** Tokens the seed issues carry this name; each run replaces its earlier ones. */
const TOKEN_NAME = 'demo'
const TOKEN_DAYS = 7

/** What a seed made: the tokens the examples send, by variable name, and what it created (the admin among the users). */
export interface Seeded {
  tokens: Record<string, string>
  created: { users: number; products: number; reviews: number; orders: number }
}

interface Answer {
  status: number
  headers: Record<string, unknown>
  body: unknown
}

/** Seeds the demo shop on a started app and its database. */
export async function seedShop(app: FastifyInstance, db: Database, admin: { email: string; password: string } = DEMO_ADMIN): Promise<Seeded> {
  const store = accounts(db)
  const created = { users: 0, products: 0, reviews: 0, orders: 0 }

  /** A request as `token`'s user; any error answer stops the seed, but a 409 where `exists` says it means "already there". */
  async function call(method: string, path: string, token: string, payload?: object, { headers = {}, exists = false } = {}): Promise<Answer> {
    const answer = await app.inject({ method: method as 'GET', url: `/api/v2${path}`, payload, headers: { authorization: `Bearer ${token}`, ...headers } })
    const body: unknown = answer.body === '' ? undefined : answer.json()
    if (answer.statusCode >= 400 && !(exists && answer.statusCode === 409)) throw new Error(`${method} ${path} answered ${answer.statusCode}: ${answer.body}`)
    return { status: answer.statusCode, headers: answer.headers, body }
  }

  /** A new demo token for the user, after revoking the ones earlier seeds issued. */
  async function issueToken(userId: string): Promise<string> {
    for (const old of await store.tokensOf(userId)) if (old.name === TOKEN_NAME) await store.deleteToken(userId, old.id)
    const token = newSecret('rf_token_')
    await store.createToken(userId, secretHash(token), { name: TOKEN_NAME, scopes: ['read', 'write'], expiresAt: new Date(Date.now() + TOKEN_DAYS * 86_400_000) })
    return token
  }

  if (await store.ensureAdmin(admin.email, () => hashPassword(admin.password))) created.users++
  const adminToken = await issueToken((await store.byEmail(admin.email))!.id)
  const tokens: Record<string, string> = { ADMIN_TOKEN: adminToken }
  const customerTokens = {} as Record<Customer, string>
  for (const customer of DEMO_CUSTOMERS) {
    let user = await store.byEmail(customer.email)
    if (!user) {
      await call('POST', '/users', adminToken, { email: customer.email, name: customer.name, password: customer.password })
      user = (await store.byEmail(customer.email))!
      created.users++
    }
    customerTokens[customer.key] = tokens[`${customer.key.toUpperCase()}_TOKEN`] = await issueToken(user.id)
  }

  const productIds = new Map<string, string>()
  for (const product of PRODUCTS) {
    const found = (await call('GET', `/products?sku=${product.sku}`, adminToken)).body as { id: string }[]
    if (found[0]) {
      productIds.set(product.sku, found[0].id)
      continue
    }
    const { price, cost, ...fields } = product
    const answer = await call('POST', '/products', adminToken, { ...fields, tags: [...fields.tags], price: { amount: price }, cost: { amount: cost } })
    productIds.set(product.sku, (answer.body as { id: string }).id)
    created.products++
  }

  for (const { sku, by, ...review } of REVIEWS) {
    const answer = await call('POST', `/products/${productIds.get(sku)}/reviews`, customerTokens[by], review, { exists: true })
    if (answer.status === 201) created.reviews++
  }

  for (const order of ORDERS) {
    const token = customerTokens[order.by]
    const mine = (await call('GET', '/orders?size=100', token)).body as { id: string }[]
    const details = await Promise.all(mine.map(async ({ id }) => (await call('GET', `/orders/${id}`, token)).body as { id: string; note: string | null }))
    if (details.some((existing) => existing.note === order.note)) continue
    const answer = await call('POST', '/orders', token, { note: order.note })
    const id = (answer.body as { id: string }).id
    for (const item of order.items) await call('POST', `/orders/${id}/items`, token, { product_id: productIds.get(item.sku), quantity: item.quantity })
    if (order.paid) {
      const current = await call('GET', `/orders/${id}`, token)
      await call('PATCH', `/orders/${id}`, token, { status: 'paid' }, { headers: { 'if-match': String(current.headers.etag) } })
    }
    created.orders++
  }
  return { tokens, created }
}

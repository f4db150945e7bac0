/** The orders collection: owner-scoped, changed only by a client that read the current version, with a lifecycle. */
import type { RowOf } from '../../db/models.js'
import { itemCount, lockStock, moveStock } from '../../db/shop.js'
import { ApiError } from '../../errors.js'
import { defineCollection, type Transition, type TransitionContext } from '../../resources/collection.js'
import { columnList } from '../../resources/store.js'
import { moneyView } from '../money.js'
import { products } from '../products/index.js'
import { MAX_ORDER_TOTAL, Order, OrderCreate, OrderSummary } from './schema.js'

/** The products a stock change returns, read as the products collection's rows, for their events. */
const PRODUCT_ROW = columnList(products.columns, 'p')

/** Paying needs at least one item (409 otherwise). */
async function hasItems({ tx, item }: TransitionContext): Promise<void> {
  if ((await itemCount(tx, item.id as string)) === 0) throw new ApiError('STATE_CONFLICT', 'An order without items cannot be paid; add items first.')
}

/** Paying takes the items' quantities from stock: all of them, or none when a product is short (409 naming it). */
async function takeStock(context: TransitionContext): Promise<void> {
  const { tx, item } = context
  const short = (await lockStock(tx, item.id as string)).filter((need) => need.stock < need.needed)
  if (short.length > 0) {
    throw new ApiError(
      'STATE_CONFLICT',
      `Not enough stock of ${short.map((need) => need.sku).join(', ')} to pay the order; nothing was changed.`,
      short.map((need) => ({ field: 'product_id', reason: `${need.id} (${need.sku}) has ${need.stock} in stock; the order needs ${need.needed}` })),
    )
  }
  for (const product of await moveStock<RowOf<'product'>>(tx, item.id as string, -1, PRODUCT_ROW)) context.changed(products, product)
}

/** Cancelling a paid order puts its items' quantities back in stock. */
async function giveStockBack(context: TransitionContext): Promise<void> {
  const { tx, item } = context
  await lockStock(tx, item.id as string)
  for (const product of await moveStock<RowOf<'product'>>(tx, item.id as string, 1, PRODUCT_ROW)) context.changed(products, product)
}

const pay: Transition = { by: ['owner'], guard: hasItems, effect: takeStock }

export const orders = defineCollection({
  name: 'orders',
  model: 'order',
  schemas: { create: OrderCreate, item: Order, summary: OrderSummary },
  owner: 'user_id',
  sortable: ['status', 'total', 'created_at', 'updated_at'],
  filterable: ['status', 'total', 'user_id', 'created_at', 'updated_at'],
  // GET /orders/aggregates: a customer's own orders, an admin's every order (by customer, too).
  aggregates: { groupBy: ['status', 'user_id'], metrics: { total: ['sum', 'avg', 'min', 'max'] } },
  access: { list: 'owner-or-admin', read: 'owner-or-admin', create: 'authenticated', update: 'owner-or-admin', delete: 'owner-or-admin' },
  // Two clients changing one order must not overwrite each other: If-Match or 428.
  requireIfMatch: true,
  states: {
    field: 'status',
    initial: 'pending',
    transitions: {
      pending: { paid: pay, cancelled: { by: ['owner'] } },
      paid: { shipped: { by: ['admin'] }, cancelled: { by: ['owner', 'admin'], effect: giveStockBack } },
      shipped: { delivered: { by: ['admin'] } },
    },
  },
  // A sum of items: its column (DECIMAL(15,2)) holds more than one price's.
  versions: { 2: { total: moneyView({ maximum: MAX_ORDER_TOTAL }) } },
})

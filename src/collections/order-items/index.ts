/** /orders/{id}/items: only the order's owner or an admin; priced from the product; only while pending. */
import type { Statements } from '../../db/client.js'
import { lockedOrderStatus, productForSale } from '../../db/shop.js'
import { ApiError } from '../../errors.js'
import { defineCollection } from '../../resources/collection.js'
import { moneyView } from '../money.js'
import { orders } from '../orders/index.js'
import { OrderItem, OrderItemCreate, OrderItemSummary } from './schema.js'

/**
 * 409 unless the order is pending, the order locked until the write commits, so that it cannot be
 * paid in between (an order already deleted is left to the write: 404).
 */
async function whilePending(tx: Statements, orderId: string): Promise<void> {
  const status = await lockedOrderStatus(tx, orderId)
  if (status !== undefined && status !== 'pending') {
    throw new ApiError('STATE_CONFLICT', `The order is ${status}: its items change only while it is pending.`)
  }
}

export const orderItems = defineCollection({
  name: 'items',
  model: 'orderItem',
  table: 'order_items',
  schemas: { create: OrderItemCreate, item: OrderItem, summary: OrderItemSummary },
  // No owner of their own: the order's owner owns its items.
  // The order's total is the sum of its items (a trigger): its event follows each change.
  parent: { collection: orders, field: 'order_id', aggregates: true },
  references: { product: { field: 'product_id', collection: 'products' } },
  sortable: ['quantity', 'unit_price', 'created_at'],
  filterable: ['product_id', 'quantity', 'created_at'],
  access: { list: 'owner-or-admin', read: 'owner-or-admin', create: 'owner-or-admin', update: 'owner-or-admin', delete: 'owner-or-admin' },
  versions: { 2: { unit_price: moneyView() } },
  hooks: {
    beforeDelete: ({ parentId, tx }) => whilePending(tx, parentId!),
    async beforeWrite({ data, current, parentId, tx }) {
      await whilePending(tx, parentId!)
      // The price is the product's when the item is added, or when it is changed to another product.
      const productId = data.product_id
      if (productId === undefined || productId === current?.product_id) return
      const product = await productForSale(tx, productId)
      if (product?.status !== 'active') {
        throw new ApiError('VALIDATION_ERROR', undefined, [{ field: 'product_id', reason: product ? 'is not an active product' : 'refers to a product that does not exist' }])
      }
      data.unit_price = product.price
    },
  },
})

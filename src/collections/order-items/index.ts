/** /orders/{id}/items: only the order's owner or an admin; priced from the product; only while pending. */
import type { Database } from '../../db/client.js'
import { orderStatus, productForSale } from '../../db/shop.js'
import { ApiError } from '../../errors.js'
import { defineCollection } from '../../resources/collection.js'
import { moneyView } from '../money.js'
import { orders } from '../orders/index.js'
import { OrderItem, OrderItemCreate, OrderItemSummary } from './schema.js'

/** 409 unless the order is pending (an order already deleted is left to the write: 404). */
async function whilePending(db: Database, orderId: string): Promise<void> {
  const status = await orderStatus(db, orderId)
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
  parent: { collection: orders, field: 'order_id' },
  sortable: ['quantity', 'unit_price', 'created_at'],
  filterable: ['product_id', 'quantity', 'created_at'],
  access: { list: 'owner-or-admin', read: 'owner-or-admin', create: 'owner-or-admin', update: 'owner-or-admin', delete: 'owner-or-admin' },
  versions: { 2: { unit_price: moneyView() } },
  hooks: {
    beforeDelete: ({ parentId, db }) => whilePending(db, parentId!),
    async beforeWrite({ data, current, parentId, db }) {
      await whilePending(db, parentId!)
      // The price is the product's when the item is added, or when it is changed to another product.
      const productId = data.product_id as string | undefined
      if (productId === undefined || productId === current?.product_id) return
      const product = await productForSale(db, productId)
      if (product?.status !== 'active') {
        throw new ApiError('VALIDATION_ERROR', undefined, [{ field: 'product_id', reason: product ? 'is not an active product' : 'refers to a product that does not exist' }])
      }
      data.unit_price = product.price
    },
  },
})

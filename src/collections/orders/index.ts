/** The orders collection: owner-scoped, and changed only by a client that read the current version. */
import { defineCollection } from '../../resources/collection.js'
import { moneyView } from '../money.js'
import { Order, OrderCreate, OrderSummary } from './schema.js'

export const orders = defineCollection({
  name: 'orders',
  model: 'order',
  schemas: { create: OrderCreate, item: Order, summary: OrderSummary },
  owner: 'user_id',
  sortable: ['status', 'total', 'created_at', 'updated_at'],
  filterable: ['status', 'total', 'user_id', 'created_at', 'updated_at'],
  access: { list: 'owner-or-admin', read: 'owner-or-admin', create: 'authenticated', update: 'owner-or-admin', delete: 'owner-or-admin' },
  // Two clients changing one order must not overwrite each other: If-Match or 428.
  requireIfMatch: true,
  versions: { 2: { total: moneyView() } },
})

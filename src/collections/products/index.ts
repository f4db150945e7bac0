/** The products collection: public reads, admin writes, review statistics as related data. */
import { defineCollection } from '../../resources/collection.js'
import { Product, ProductCreate, ProductSummary } from './schema.js'

export const products = defineCollection({
  name: 'products',
  model: 'product',
  schemas: { create: ProductCreate, item: Product, summary: ProductSummary },
  sortable: ['name', 'sku', 'price', 'stock', 'status', 'created_at', 'updated_at'],
  filterable: ['name', 'sku', 'price', 'stock', 'status', 'tags', 'description', 'created_at', 'updated_at'],
  related: {
    review_count: { kind: 'count', model: 'review', by: 'productId' },
    rating_average: { kind: 'average', model: 'review', by: 'productId', of: 'rating', decimals: 2 },
  },
  access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
  fieldAccess: { cost: { read: 'admin', write: 'admin' } },
})

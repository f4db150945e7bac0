/** The products collection: public reads, admin writes, review statistics as related data. */
import { defineCollection } from '../../resources/collection.js'
import { moneyView, nullableMoneyView } from '../money.js'
import { Product, ProductCreate, ProductSummary } from './schema.js'

export const products = defineCollection({
  name: 'products',
  model: 'product',
  schemas: { create: ProductCreate, item: Product, summary: ProductSummary },
  sortable: ['name', 'sku', 'price', 'stock', 'status', 'review_count', 'created_at', 'updated_at'],
  filterable: ['name', 'sku', 'price', 'stock', 'status', 'tags', 'description', 'review_count', 'created_at', 'updated_at'],
  searchable: ['name', 'sku', 'description'],
  // An upsert may find a product by its sku (`on_conflict=sku`).
  unique: ['sku'],
  // q=: the words of these, the name's first (the products_search trigger keeps the same weights).
  textSearch: { name: 'A', description: 'B', tags: 'C' },
  // review_count and rating_total are kept on the product row by a database trigger on reviews.
  computed: {
    rating_average: {
      from: ['review_count', 'rating_total'],
      value: ({ review_count, rating_total }) =>
        review_count ? Math.round(((rating_total as number) / (review_count as number)) * 100) / 100 : null,
    },
  },
  // GET /products/aggregates: the catalogue by status; cost's figures for those who may read it (admins).
  aggregates: { groupBy: ['status'], metrics: { price: ['min', 'max', 'avg'], stock: ['sum'], cost: ['min', 'max', 'avg'] } },
  access: { list: 'public', read: 'public', create: 'admin', update: 'admin', delete: 'admin' },
  fieldAccess: { cost: { read: 'admin', write: 'admin' } },
  // Anonymous reads of the catalogue may be cached by browsers and shared caches for a minute.
  cacheMaxAge: 60,
  versions: { 2: { price: moneyView(), cost: nullableMoneyView() } },
  // DELETE moves a product to the trash; admins restore it within 30 days (src/resources/trash.ts).
  trash: { days: 30 },
  // A product's history (prices, stock, status) reaches back a quarter, past the feed's week.
  history: { days: 90 },
})

/** The reviews of a product: /products/{id}/reviews. */
import { defineCollection } from '../../resources/collection.js'
import { products } from '../products/index.js'
import { Review, ReviewCreate, ReviewSummary } from './schema.js'

export const reviews = defineCollection({
  name: 'reviews',
  model: 'review',
  schemas: { create: ReviewCreate, item: Review, summary: ReviewSummary },
  // The product keeps its review count and rating (a trigger): its event follows each change.
  parent: { collection: products, field: 'product_id', aggregates: true },
  owner: 'author_id',
  references: { author: { field: 'author_id', collection: 'users' } },
  sortable: ['rating', 'created_at', 'updated_at'],
  filterable: ['rating', 'author_id', 'created_at'],
  // GET /products/{id}/reviews/aggregates: a product's ratings, how many of each and their average.
  aggregates: { groupBy: ['rating'], metrics: { rating: ['avg', 'min', 'max'] } },
  access: { list: 'public', read: 'public', create: 'authenticated', update: 'owner-or-admin', delete: 'owner-or-admin' },
})

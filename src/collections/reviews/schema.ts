/** Reviews: one per user per product, nested under the product. */
import { Type, type Static } from 'typebox'
import { Id, Int32, Nullable, ServerFields } from '../../schema-types.js'

const rating = Int32({ minimum: 1, maximum: 5 })
const title = Type.String({ maxLength: 120, examples: ['Keeps the crema'] })
const body = Type.String({ maxLength: 10_000, examples: ['Thick walls; the coffee stays hot.'] })

export const ReviewCreate = Type.Object(
  {
    rating,
    title: Type.Optional(Nullable(title)),
    body: Type.Optional(Nullable(body)),
  },
  { additionalProperties: false },
)

export const Review = Type.Object({
  id: ServerFields.id,
  product_id: Id(),
  rating,
  title: Nullable(title),
  body: Nullable(body),
  author_id: Nullable(Id({ description: 'The user who wrote the review; set from the caller.' })),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const ReviewSummary = Type.Pick(Review, ['id', 'rating', 'title', 'author_id'])

export type Review = Static<typeof Review>

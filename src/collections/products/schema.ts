/** Products: the shop's catalogue. */
import { Type, type Static } from 'typebox'
import { Int32, Money, Nullable, ServerFields, StringEnum } from '../../schema-types.js'

export const PRODUCT_STATUSES = ['draft', 'active', 'archived'] as const

const name = Type.String({ minLength: 1, maxLength: 120, examples: ['Espresso cup'] })
const sku = Type.String({ pattern: '^[A-Z0-9-]{3,32}$', maxLength: 32, description: 'Stock keeping unit: 3-32 of A-Z, 0-9 and -.', examples: ['CUP-090'] })
const price = Money()
const cost = Money({ description: 'What the shop pays; only admins read or write it.' })
const stock = Int32({ minimum: 0, examples: [40] })
const status = StringEnum(PRODUCT_STATUSES)
const description = Type.String({ maxLength: 10_000, examples: ['Stoneware, 90 ml, dishwasher safe.'] })
const tags = Type.Array(Type.String({ minLength: 1, maxLength: 40 }), { maxItems: 20, uniqueItems: true, examples: [['kitchen', 'ceramic']] })

export const ProductCreate = Type.Object(
  {
    name,
    sku,
    price,
    cost: Type.Optional(Nullable(cost)),
    stock: Type.Optional(Nullable(stock, { default: 0 })),
    status: Type.Optional(Nullable(status, { default: 'draft' })),
    description: Type.Optional(Nullable(description)),
    tags: Type.Optional(Nullable(tags, { default: [] })),
  },
  { additionalProperties: false },
)

export const Product = Type.Object({
  id: ServerFields.id,
  name,
  sku,
  price,
  cost: Nullable(cost),
  stock,
  status,
  description: Nullable(description),
  tags,
  review_count: Int32({ minimum: 0 }),
  rating_average: Nullable(Type.Number({ minimum: 1, maximum: 5 })),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const ProductSummary = Type.Pick(Product, ['id', 'name', 'sku', 'price', 'status'])

export type Product = Static<typeof Product>

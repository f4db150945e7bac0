/** The items of an order: a product, a quantity, and the price the product had when it was added. */
import { Type, type Static } from 'typebox'
import { Id, Int32, Money, Nullable, ServerFields } from '../../schema-types.js'

const quantity = Int32({ minimum: 1, maximum: 1000 })

export const OrderItemCreate = Type.Object(
  { product_id: Id({ description: 'An active product.' }), quantity },
  { additionalProperties: false },
)

export const OrderItem = Type.Object({
  id: ServerFields.id,
  order_id: Id(),
  product_id: Nullable(Id({ description: 'Null once the product is deleted.' })),
  quantity,
  unit_price: Money({ description: "The product's price when the item was added or its product changed." }),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const OrderItemSummary = Type.Pick(OrderItem, ['id', 'product_id', 'quantity', 'unit_price'])

export type OrderItem = Static<typeof OrderItem>

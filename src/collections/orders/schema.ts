/** Orders: a user's basket and its history. The total is the sum of the items, kept by the database. */
import { Type, type Static } from 'typebox'
import { Id, Nullable, ServerFields, StringEnum } from '../../schema-types.js'

/** The most an order's total can be: its column is DECIMAL(15,2). */
export const MAX_ORDER_TOTAL = 9_999_999_999_999.99

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const

const note = Type.String({ maxLength: 500, examples: ['Leave it with the neighbour.'] })
const status = StringEnum(ORDER_STATUSES, {
  default: 'pending',
  description: 'pending -> paid (owner: takes the stock) -> shipped (admin) -> delivered (admin); pending or paid -> cancelled (paid stock goes back). A new order is pending.',
})

export const OrderCreate = Type.Object({ note: Type.Optional(Nullable(note)), status: Type.Optional(status) }, { additionalProperties: false })

export const Order = Type.Object({
  id: ServerFields.id,
  user_id: Id({ description: 'The customer; set from the caller.' }),
  status,
  note: Nullable(note),
  total: Type.Number({ minimum: 0, maximum: MAX_ORDER_TOTAL, description: 'The sum of quantity * unit_price over the items.' }),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const OrderSummary = Type.Pick(Order, ['id', 'user_id', 'status', 'total', 'created_at'])

export type Order = Static<typeof Order>

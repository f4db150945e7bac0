/** Orders: a user's basket and its history. The total is the sum of the items, kept by the database. */
import { Type, type Static } from 'typebox'
import { Id, Nullable, ServerFields, StringEnum } from '../../resources/schema-types.js'

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'delivered', 'cancelled'] as const

const note = Type.String({ maxLength: 500 })

export const OrderCreate = Type.Object({ note: Type.Optional(Nullable(note)) }, { additionalProperties: false })

export const Order = Type.Object({
  id: ServerFields.id,
  user_id: Id({ description: 'The customer; set from the caller.' }),
  status: StringEnum(ORDER_STATUSES, { description: 'Read-only for now: every order is pending.' }),
  note: Nullable(note),
  total: Type.Number({ minimum: 0, description: 'The sum of quantity * unit_price over the items.' }),
  created_at: ServerFields.created_at,
  updated_at: ServerFields.updated_at,
})

export const OrderSummary = Type.Pick(Order, ['id', 'user_id', 'status', 'total', 'created_at'])

export type Order = Static<typeof Order>

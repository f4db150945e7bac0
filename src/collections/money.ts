/** The shop's currency, and API v2's view of an amount: an object with that currency; the column keeps the number. */
import { Type } from 'typebox'
import { Money, Nullable, StringEnum } from '../schema-types.js'
import type { FieldView } from '../resources/collection.js'

/** The currency of every amount the shop stores. */
export const CURRENCY = 'USD'

/**
 * An amount as API v2 shows it: `{ "amount": 12.5, "currency": "USD" }`. The shop keeps one
 * currency, so `currency` may be left out of a request and must be that currency when given.
 */
export const MoneyObject = (options: Record<string, unknown> = {}, amount: Record<string, unknown> = {}) =>
  Type.Object(
    { amount: Money(amount), currency: Type.Optional(StringEnum([CURRENCY])) },
    { additionalProperties: false, ...options },
  )

const view = (schema: FieldView['schema']): FieldView => ({
  schema,
  read: (amount) => ({ amount, currency: CURRENCY }),
  write: (value) => (value as { amount: number }).amount,
})

/** The v2 view of an amount field (`amount`: options of its amount, such as a wider maximum), and of one that may be null. */
export const moneyView = (amount: Record<string, unknown> = {}) => view(MoneyObject({}, amount))
export const nullableMoneyView = () => view(Nullable(MoneyObject()))

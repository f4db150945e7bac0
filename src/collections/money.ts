/** API v2 shows an amount as an object with its currency; the column keeps the number. */
import { CURRENCY, MoneyObject, Nullable } from '../resources/schema-types.js'
import type { FieldView } from '../resources/versions.js'

const view = (schema: FieldView['schema']): FieldView => ({
  schema,
  read: (amount) => ({ amount, currency: CURRENCY }),
  write: (value) => (value as { amount: number }).amount,
})

/** The v2 view of an amount field, and of one that may be null. */
export const moneyView = () => view(MoneyObject())
export const nullableMoneyView = () => view(Nullable(MoneyObject()))

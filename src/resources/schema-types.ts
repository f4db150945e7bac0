/** TypeBox building blocks that every collection's schema uses: ids, timestamps, money, nullable fields. */
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox'

/** Largest value of a PostgreSQL `integer` column. */
export const MAX_INT4 = 2_147_483_647

/** Largest amount a `DECIMAL(12,2)` column holds. */
export const MAX_MONEY = 9_999_999_999.99

/**
 * `T` or `null`, written as a JSON Schema type list (`["string","null"]`) rather than `anyOf`,
 * so that a wrong value gets one clear validation error instead of one per branch.
 */
export function Nullable<T extends TSchema>(schema: T, options: Record<string, unknown> = {}): TUnsafe<Static<T> | null> {
  const { type, enum: values, ...rest } = schema as unknown as { type?: string; enum?: unknown[] }
  if (type === undefined) throw new TypeError('Nullable() needs a schema with a single `type`')
  return Type.Unsafe<Static<T> | null>({
    ...rest,
    type: [type, 'null'],
    ...(values ? { enum: [...values, null] } : {}),
    ...options,
  })
}

/** Lives in src/json-schema.ts, below every layer (auth's bodies use it too); handed on with the collections' other blocks. */
export { StringEnum } from '../json-schema.js'

/** An amount with at most two decimals, as stored in `DECIMAL(12,2)`; JSON carries it as a number. */
export const Money = (options: Record<string, unknown> = {}) =>
  Type.Number({ minimum: 0, maximum: MAX_MONEY, 'x-decimals': 2, ...options })

/** A server-made UUIDv7. */
export const Id = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', ...options })

/** An RFC 3339 UTC timestamp with milliseconds. */
export const Timestamp = () => Type.String({ format: 'date-time' })

/** The fields the server sets on every item. */
export const ServerFields = {
  id: Id(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}

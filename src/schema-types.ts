/** TypeBox building blocks that every collection's schema uses: ids, timestamps, money, nullable fields. */
import { Type, type Static, type TSchema, type TUnsafe } from 'typebox'

/** Largest value of a PostgreSQL `integer` column. */
export const MAX_INT4 = 2_147_483_647

/** Largest event id: events.id is a `BIGINT`, read as a JavaScript number, exact up to 2^53 - 1. */
export const MAX_EVENT_ID = Number.MAX_SAFE_INTEGER

/** Length of a UUID in its canonical form, the only one the service stores (ajv's `uuid` also takes `urn:uuid:`, which PostgreSQL refuses). */
export const UUID_LENGTH = 36

/**
 * Longest RFC 3339 date-time taken: `2026-01-31T12:00:00.123456789+05:30`, nanoseconds and an
 * offset (ajv's `date-time` allows any number of fraction digits).
 */
export const MAX_TIMESTAMP_LENGTH = 35

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
export { StringEnum } from './json-schema.js'

/** An amount with at most two decimals, as stored in `DECIMAL(12,2)`; JSON carries it as a number. */
export const Money = (options: Record<string, unknown> = {}) =>
  Type.Number({ minimum: 0, maximum: MAX_MONEY, 'x-decimals': 2, examples: [12.5], ...options })

/**
 * A 32-bit integer, as a PostgreSQL `integer` column holds (or a narrower one): within its range
 * unless `options` narrow it. The format only describes (http/validator.ts): the bounds check.
 */
export const Int32 = (options: Record<string, unknown> = {}) =>
  Type.Integer({ format: 'int32', minimum: -MAX_INT4 - 1, maximum: MAX_INT4, ...options })

/** An event's id in the feed (events.id, a `BIGINT`); as with Int32, the format only describes. */
export const EventId = (options: Record<string, unknown> = {}) =>
  Type.Integer({ format: 'int64', minimum: 1, maximum: MAX_EVENT_ID, ...options })

/** A server-made UUIDv7. */
export const Id = (options: Record<string, unknown> = {}) => Type.String({ format: 'uuid', maxLength: UUID_LENGTH, ...options })

/** An RFC 3339 UTC timestamp with milliseconds. */
export const Timestamp = () => Type.String({ format: 'date-time', maxLength: MAX_TIMESTAMP_LENGTH })

/** The fields the server sets on every item. */
export const ServerFields = {
  id: Id(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
}

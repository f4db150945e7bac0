/** Reads one filter value from the query string according to the field's type. */
import { Type, type TSchema } from 'typebox'
import type { Field } from '../fields.js'
import { isUuid } from '../../ids.js'
import { Id, MAX_INT4 } from '../../schema-types.js'
import type { FilterValue } from './plan.js'

const INTEGER = /^-?\d{1,15}$/
const DECIMAL = /^-?\d{1,15}(\.\d{1,15})?$/
/** The longest text DECIMAL matches: a sign, 15 digits, a point and 15 more. */
const DECIMAL_MAX_LENGTH = 32
// RFC 3339 date-time, or a plain date meaning its midnight UTC.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:\d{2}))?$/
/** The longest text DATE_TIME matches: `2026-01-31T12:00:00.123456+05:30`. */
const DATE_TIME_MAX_LENGTH = 32

/** Longest string a filter compares; longer ones cannot match any stored value we allow. */
export const MAX_FILTER_LENGTH = 1000

/** The value, or a reason it cannot be one of this field's values. */
export type Parsed = { ok: true; value: FilterValue } | { ok: false; reason: string }

const fail = (reason: string): Parsed => ({ ok: false, reason })

/** A number within the field's range (a value outside can match nothing, and may not fit the column). */
function inRange(field: Field, value: number, parsed: FilterValue): Parsed {
  const [min, max] = field.range!
  return value >= min && value <= max ? { ok: true, value: parsed } : fail(`must be from ${min} to ${max}`)
}

/**
 * A calendar date-time that exists (`Date.parse` rolls 2026-02-30 over to March), at an instant
 * in years 1 to 9999, the years RFC 3339 can write: `0001-01-01T00:00:00+14:00` is written in
 * year 1 but falls in year 0, which PostgreSQL refuses, and `9999-12-31T23:59:59-23:59` falls in
 * year 10000, which PGlite's parameters cannot carry (each a 500 before).
 */
function dateTime(raw: string): Parsed {
  const time = DATE_TIME.test(raw) ? Date.parse(raw) : NaN
  const day = raw.slice(0, 10)
  const year = new Date(time).getUTCFullYear()
  const exists = !Number.isNaN(time) && year >= 1 && year <= 9999 && new Date(Date.parse(day)).toISOString().startsWith(day)
  return exists ? { ok: true, value: new Date(time) } : fail('must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z')
}

export function parseValue(field: Field, raw: string): Parsed {
  switch (field.kind) {
    case 'integer':
      return INTEGER.test(raw) ? inRange(field, Number(raw), Number(raw)) : fail('must be an integer')
    case 'number':
      // Kept as a string: PostgreSQL compares it as an exact decimal.
      return DECIMAL.test(raw) ? inRange(field, Number(raw), raw) : fail('must be a decimal number such as 12.50')
    case 'boolean':
      return raw === 'true' || raw === 'false' ? { ok: true, value: raw === 'true' } : fail('must be true or false')
    case 'uuid':
      return isUuid(raw) ? { ok: true, value: raw.toLowerCase() } : fail('must be a UUID')
    case 'enum':
      return field.values?.includes(raw) ? { ok: true, value: raw } : fail(`must be one of ${field.values?.join(', ')}`)
    case 'datetime':
      return dateTime(raw)
    case 'string':
    case 'string[]':
      if (raw.length > MAX_FILTER_LENGTH) return fail(`must be at most ${MAX_FILTER_LENGTH} characters`)
      // PostgreSQL text cannot hold U+0000; no stored value contains it.
      return raw.includes('\u0000') ? fail('must not contain U+0000') : { ok: true, value: raw }
  }
}

/**
 * The values parseValue reads, as the OpenAPI document shows them: the same patterns and ranges,
 * so a value the document calls valid is one the parser takes.
 */
export function valueSchema(field: Field): TSchema {
  const [minimum, maximum] = field.range ?? []
  switch (field.kind) {
    case 'integer':
      // An integer field's range is its column's: int32 for an `integer`, int64 beyond (an event id).
      return Type.Integer({ format: minimum! >= -MAX_INT4 - 1 && maximum! <= MAX_INT4 ? 'int32' : 'int64', minimum, maximum })
    case 'number':
      return Type.String({ pattern: DECIMAL.source, maxLength: DECIMAL_MAX_LENGTH, description: `A decimal number such as 12.50, from ${minimum} to ${maximum}.` })
    case 'boolean':
      return Type.Boolean()
    case 'uuid':
      return Id()
    case 'enum':
      return Type.Unsafe<string>({ type: 'string', enum: [...(field.values ?? [])] })
    case 'datetime':
      return Type.String({ pattern: DATE_TIME.source, maxLength: DATE_TIME_MAX_LENGTH, description: 'An RFC 3339 date-time, or a date (its midnight UTC).' })
    case 'string':
    case 'string[]':
      return Type.String({ maxLength: MAX_FILTER_LENGTH })
  }
}

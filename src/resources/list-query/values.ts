/** Reads one filter value from the query string according to the field's type. */
import type { Field } from '../fields.js'
import type { FilterValue } from './plan.js'

const INTEGER = /^-?\d{1,15}$/
const DECIMAL = /^-?\d{1,15}(\.\d{1,15})?$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
// RFC 3339 date-time, or a plain date meaning its midnight UTC.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?([Zz]|[+-]\d{2}:\d{2}))?$/

/** Longest string a filter compares; longer ones cannot match any stored value we allow. */
const MAX_FILTER_LENGTH = 1000

/** The value, or a reason it cannot be one of this field's values. */
export type Parsed = { ok: true; value: FilterValue } | { ok: false; reason: string }

const fail = (reason: string): Parsed => ({ ok: false, reason })

export function parseValue(field: Field, raw: string): Parsed {
  switch (field.kind) {
    case 'integer':
      return INTEGER.test(raw) ? { ok: true, value: Number(raw) } : fail('must be an integer')
    case 'number':
      // Kept as a string: PostgreSQL compares it as an exact decimal.
      return DECIMAL.test(raw) ? { ok: true, value: raw } : fail('must be a decimal number such as 12.50')
    case 'boolean':
      return raw === 'true' || raw === 'false' ? { ok: true, value: raw === 'true' } : fail('must be true or false')
    case 'uuid':
      return UUID.test(raw) ? { ok: true, value: raw.toLowerCase() } : fail('must be a UUID')
    case 'enum':
      return field.values?.includes(raw) ? { ok: true, value: raw } : fail(`must be one of ${field.values?.join(', ')}`)
    case 'datetime': {
      const time = DATE_TIME.test(raw) ? Date.parse(raw) : NaN
      return Number.isNaN(time) ? fail('must be an RFC 3339 date-time such as 2026-01-31T12:00:00Z') : { ok: true, value: new Date(time) }
    }
    case 'string':
    case 'string[]':
      return raw.length <= MAX_FILTER_LENGTH ? { ok: true, value: raw } : fail(`must be at most ${MAX_FILTER_LENGTH} characters`)
  }
}

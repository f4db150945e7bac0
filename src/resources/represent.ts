/** Turns stored rows into representations: JSON names, decimals as numbers, timestamps as RFC 3339. */
import type { Field } from './fields.js'

export type Row = Record<string, unknown>
export type Representation = Record<string, unknown>

export type Convert = (value: unknown) => unknown

const asIs: Convert = (value) => value
// Prisma returns DECIMAL columns as Decimal objects; every amount we store fits a double exactly enough.
const decimal: Convert = (value) => (value === null ? null : Number(value))
// BIGINT columns come as strings from pg and as bigints from Prisma; the ids they hold are safe integers.
const integer: Convert = (value) => (typeof value === 'string' || typeof value === 'bigint' ? Number(value) : value)
// A row's timestamps are Dates; an embedded row's (include=, as JSON) are PostgreSQL's text, with its offset.
const timestamp: Convert = (value) => (value instanceof Date ? value.toISOString() : typeof value === 'string' ? new Date(value).toISOString() : value)

/** How a stored value of this kind is shown: decimals as numbers, timestamps as RFC 3339. */
export const converterOf = (field: Pick<Field, 'kind'>): Convert =>
  field.kind === 'number' ? decimal : field.kind === 'integer' ? integer : field.kind === 'datetime' ? timestamp : asIs

/** A field computed from stored values when represented; `from` names them (JSON names). */
export interface ComputedField {
  from: readonly string[]
  value(stored: Record<string, unknown>): unknown
}

/** A function from a row to the representation with the given fields, computed ones included. */
export function representer(
  fields: readonly Field[],
  computed: Readonly<Record<string, ComputedField>> = {},
): (row: Row) => Representation {
  const plan = fields.filter((f) => !f.computed).map((f) => [f.name, converterOf(f)] as const)
  const derived = fields.filter((f) => f.computed).map((f) => [f.name, computed[f.name]!] as const)
  return (row) => {
    const out: Representation = {}
    for (const [name, convert] of plan) out[name] = convert(row[name])
    for (const [name, { value, from }] of derived) out[name] = value(Object.fromEntries(from.map((column) => [column, row[column]])))
    return out
  }
}

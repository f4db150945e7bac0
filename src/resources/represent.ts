/** Turns stored rows into representations: JSON names, decimals as numbers, timestamps as RFC 3339. */
import type { Field } from './fields.js'

export type Row = Record<string, unknown>
export type Representation = Record<string, unknown>

type Convert = (value: unknown) => unknown

const asIs: Convert = (value) => value
// Prisma returns DECIMAL columns as Decimal objects; every amount we store fits a double exactly enough.
const decimal: Convert = (value) => (value === null ? null : Number(value))
const timestamp: Convert = (value) => (value instanceof Date ? value.toISOString() : value)

const converterOf = (field: Field): Convert =>
  field.kind === 'number' ? decimal : field.kind === 'datetime' ? timestamp : asIs

/** A function from a row to the representation with the given fields (related data added by the caller). */
export function representer(fields: readonly Field[]): (row: Row) => Representation {
  const plan = fields.filter((f) => !f.related).map((f) => [f.name, f.column, converterOf(f)] as const)
  return (row) => {
    const out: Representation = {}
    for (const [name, column, convert] of plan) out[name] = convert(row[column])
    return out
  }
}

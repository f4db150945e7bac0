/**
 * The columns of a CSV export: one per field of the representation, in the schema's order, an
 * object's fields as dotted columns (`price.amount`, `price.currency`), anything else one column.
 */
import type { Representation } from '../represent.js'

/** A column: its header, and the path to its value in a representation. */
export interface Column {
  name: string
  path: readonly string[]
}

interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
}

/** The columns of one field, by its schema; an object's (or a nullable object's) properties each their own. */
function columnsOfField(path: readonly string[], schema: JsonSchema | undefined): Column[] {
  const types = [schema?.type ?? []].flat()
  if (types.includes('object') && schema?.properties) return Object.entries(schema.properties).flatMap(([name, inner]) => columnsOfField([...path, name], inner))
  return [{ name: path.join('.'), path }]
}

/** The columns of the fields `names` (in their order) as the item schema `item` shows them. */
export function columnsOf(item: object, names: readonly string[]): Column[] {
  const properties = (item as JsonSchema).properties ?? {}
  return names.flatMap((name) => columnsOfField([name], properties[name]))
}

/**
 * A column's value as a field's text: null (an empty field) when the item has none, or not for
 * this caller; numbers and booleans as JSON writes them; arrays (and objects not split into
 * columns) as JSON text.
 */
export function cellOf(representation: Representation, column: Column): string | null {
  let value: unknown = representation
  for (const part of column.path) {
    if (value === null || typeof value !== 'object') return null
    value = (value as Record<string, unknown>)[part]
  }
  if (value === undefined || value === null) return null
  if (typeof value === 'string') return value
  return typeof value === 'object' ? JSON.stringify(value) : String(value)
}

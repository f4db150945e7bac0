/**
 * A CSV import's records as the items of a JSON array (DESIGN "Data over time"): the header names
 * the fields, dotted for nested objects (`price.amount`), as an export writes them; each cell is
 * converted by the create schema's type of its field, so that the array create checks the items
 * as it checks JSON ones. A cell that does not convert is passed on as its text, and validation
 * names it (`[2].price: must be a number`), after the checks that come before a 422.
 */
import { ApiError } from '../../errors.js'
import { parseCsv, type CsvCell, type CsvRow } from '../../http/csv.js'
import type { Imported } from '../../http/body-parser.js'

/** The parts of a JSON schema a cell's conversion reads. */
export interface JsonSchema {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
}

/** How a cell's text becomes its field's value. */
type Convert = (text: string) => unknown

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/

const asText: Convert = (text) => text
const asNumber: Convert = (text) => (NUMBER.test(text) ? Number(text) : text)
const asBoolean: Convert = (text) => (text === 'true' ? true : text === 'false' ? false : text)
/** Arrays and objects are written as JSON text (an export writes them so). */
const asJson: Convert = (text) => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const typesOf = (schema: JsonSchema | undefined) => (schema === undefined ? [] : [schema.type ?? []].flat().filter((type) => type !== 'null'))

function converterOf(schema: JsonSchema | undefined): Convert {
  const [type] = typesOf(schema)
  if (type === 'integer' || type === 'number') return asNumber
  if (type === 'boolean') return asBoolean
  if (type === 'array' || type === 'object') return asJson
  // A string, an enum, or a column the schema does not know: validation says which it is not.
  return asText
}

/** The schema a dotted name reaches in `create`, through nested objects; undefined when it reaches none. */
function schemaAt(create: JsonSchema, path: readonly string[]): JsonSchema | undefined {
  let schema: JsonSchema | undefined = create
  for (const part of path) schema = typesOf(schema).includes('object') ? schema?.properties?.[part] : undefined
  return schema
}

interface Column {
  path: readonly string[]
  convert: Convert
}

const unreadable = (line: number, reason: string) => new ApiError('BAD_REQUEST', `The CSV body cannot be read: line ${line} ${reason}.`, [{ field: `line ${line}`, reason }])

/**
 * The columns the header names, each with its conversion; null for one that names a read-only
 * field (`id`, `created_at`: what an export writes and a create does not take), which is skipped.
 */
function columnsOf(header: CsvRow, create: JsonSchema, readOnly: ReadonlySet<string>): (Column | null)[] {
  const names = header.cells.map((cell) => cell.text)
  const problem = (reason: string) => unreadable(header.line, `(the header) ${reason}`)
  names.forEach((name, i) => {
    if (name === '') throw problem(`has an empty name in column ${i + 1}`)
    if (names.indexOf(name) !== i) throw problem(`names "${name}" twice`)
    const parent = names.find((other) => name.startsWith(`${other}.`))
    if (parent !== undefined) throw problem(`names both "${parent}" and "${name}": give the object as one JSON column or as dotted columns, not both`)
  })
  return names.map((name) => {
    const path = name.split('.')
    if (readOnly.has(path[0]!) && !(path[0]! in (create.properties ?? {}))) return null
    return { path, convert: converterOf(schemaAt(create, path)) }
  })
}

/** `target[key] = value` as an own property, whatever the key: a column named `__proto__` is a field validation refuses, as JSON.parse makes it. */
const setOwn = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })

/** Sets `value` at `path` in `item`, making the objects on the way. */
function place(item: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let target = item
  for (const part of path.slice(0, -1)) {
    let next = Object.hasOwn(target, part) ? (target[part] as Record<string, unknown>) : undefined
    if (next === undefined) setOwn(target, part, (next = {}))
    target = next
  }
  setOwn(target, path[path.length - 1]!, value)
}

/** One record as an item: an unquoted empty cell leaves its field out (null and absent are one to a create); `""` is the empty string. */
function itemOf(cells: readonly CsvCell[], columns: readonly (Column | null)[]): Record<string, unknown> {
  const item: Record<string, unknown> = {}
  cells.forEach((cell, i) => {
    const column = columns[i]
    if (!column || (cell.text === '' && !cell.quoted)) return
    place(item, column.path, cell.quoted && cell.text === '' ? '' : column.convert(cell.text))
  })
  return item
}

/**
 * The items of a CSV body for a collection whose create takes `create` (this API version's body
 * schema); `readOnly`: the fields a create does not take, whose columns are skipped.
 */
export function itemsFromCsv(text: string, create: JsonSchema, readOnly: ReadonlySet<string>): Imported {
  // PostgreSQL text cannot hold U+0000.
  if (text.includes('\u0000')) throw new ApiError('BAD_REQUEST', 'The CSV body has a U+0000 character, which no field can hold.')
  const [header, ...records] = parseCsv(text)
  if (!header) throw new ApiError('BAD_REQUEST', 'The CSV body is empty: send a header row naming the fields, then a row per item.')
  const columns = columnsOf(header, create, readOnly)
  const items = records.map((record) => {
    if (record.cells.length !== columns.length) {
      throw unreadable(record.line, `has ${record.cells.length} ${record.cells.length === 1 ? 'field' : 'fields'}; the header has ${columns.length}`)
    }
    return itemOf(record.cells, columns)
  })
  return { items, lines: records.map((record) => record.line) }
}

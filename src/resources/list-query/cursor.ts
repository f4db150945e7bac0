/**
 * Keyset paging: opaque cursors holding the sort-key values of a page's boundary row, so that a
 * page is found with an index seek whatever its depth (`?cursor=`), unlike `page`'s OFFSET.
 */
import type { Row } from '../represent.js'
import { RELEVANCE, type CursorPosition, type FilterValue, type ListPlan, type SortKey } from './plan.js'
import { parseValue } from './values.js'

interface Payload {
  /** The sort the cursor was made for; another sort cannot use it. */
  s: string
  v: (string | number | boolean)[]
  b?: 1
}

const signature = (sort: readonly SortKey[]) => sort.map((key) => `${key.field.name}:${key.direction}`).join(',')

/** A sort key's value as the cursor keeps it: a decimal (a price, a rank) as its text, read back exactly. */
function toJson(key: SortKey, value: unknown): string | number | boolean {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === 'number' && key.field.kind === 'number') return String(value)
  return typeof value === 'number' || typeof value === 'boolean' ? value : String(value)
}

export function encodeCursor(sort: readonly SortKey[], row: Row, backward: boolean): string {
  const payload: Payload = { s: signature(sort), v: sort.map((key) => toJson(key, row[key.field.name])) }
  if (backward) payload.b = 1
  return Buffer.from(JSON.stringify(payload)).toString('base64url')
}

/**
 * A sort-key value read back from a cursor, checked as a filter value of that field would be: a
 * cursor is the client's input like any other, and a forged one must be a 400, never reach SQL
 * as a value its column cannot hold (a non-UUID id, an integer out of range, a year 300000).
 */
function fromJson(key: SortKey, value: unknown): FilterValue | undefined {
  const kind = key.field.kind
  const text =
    kind === 'integer' ? (Number.isSafeInteger(value) ? String(value) : undefined)
    : kind === 'boolean' ? (typeof value === 'boolean' ? String(value) : undefined)
    : typeof value === 'string' ? value
    : undefined
  if (text === undefined) return undefined
  // A rank is a float4 as JavaScript writes it, exponent and all (4.2e-10); it is never a stored value.
  if (key.field === RELEVANCE) return /^\d+(\.\d+)?(e-\d+)?$/.test(text) && Number.isFinite(Number(text)) ? text : undefined
  const parsed = parseValue(key.field, text)
  return parsed.ok ? parsed.value : undefined
}

/** The position a cursor stands for, or undefined when it is not one this query made. */
export function decodeCursor(text: string, sort: readonly SortKey[]): CursorPosition | undefined {
  let payload: Payload
  try {
    payload = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Payload
  } catch {
    return undefined
  }
  if (payload?.s !== signature(sort) || !Array.isArray(payload.v) || payload.v.length !== sort.length) return undefined
  const values = sort.map((key, i) => fromJson(key, payload.v[i]))
  if (values.some((value) => value === undefined)) return undefined
  return { values: values as FilterValue[], backward: payload.b === 1 }
}

export interface CursorPage {
  rows: Row[]
  next: string | undefined
  prev: string | undefined
}

/**
 * A keyset page from the rows read (one more than the page size, to know whether more follow;
 * read in reverse order when going backward).
 */
export function cursorPage(rows: Row[], plan: ListPlan): CursorPage {
  const position = plan.cursor?.position ?? null
  const more = rows.length > plan.size
  const page = rows.slice(0, plan.size)
  if (position?.backward) page.reverse()
  const first = page[0]
  const last = page[page.length - 1]
  const hasNext = position?.backward ? true : more
  const hasPrev = position?.backward ? more : position !== null
  return {
    rows: page,
    next: hasNext && last ? encodeCursor(plan.sort, last, false) : undefined,
    prev: hasPrev && first ? encodeCursor(plan.sort, first, true) : undefined,
  }
}

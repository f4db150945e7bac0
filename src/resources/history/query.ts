/** The query of an item's history: how many entries, and from which cursor; 400 naming every parameter that is not one. */
import { ApiError, type ErrorDetail } from '../../errors.js'
import { MAX_EVENT_ID } from '../../schema-types.js'
import type { RawQuery } from '../list-query/parse.js'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../list-query/plan.js'

/** What a history request asks for: `size` entries older than the event `before`. */
export interface HistoryPlan {
  size: number
  /** The cursor: the id of the last entry of the page before; undefined for the newest entries. */
  before: number | undefined
}

// `trashed` chooses the item's shelf (src/resources/trash.ts), read by the handler.
const PARAMETERS = new Set(['size', 'cursor', 'trashed'])

/** One value of `name`, or undefined when it is absent; a repeated parameter is a problem. */
function single(query: RawQuery, name: string, problems: ErrorDetail[]): string | undefined {
  const raw = query[name]
  if (!Array.isArray(raw)) return raw
  problems.push({ field: name, reason: 'may be given once' })
  return undefined
}

export function parseHistoryQuery(query: RawQuery): HistoryPlan {
  const problems: ErrorDetail[] = []
  for (const name of Object.keys(query)) if (!PARAMETERS.has(name)) problems.push({ field: name, reason: "is not a parameter of an item's history" })
  const size = single(query, 'size', problems)
  const cursor = single(query, 'cursor', problems)
  const sizeOk = size === undefined || (/^\d{1,3}$/.test(size) && Number(size) >= 1 && Number(size) <= MAX_PAGE_SIZE)
  if (!sizeOk) problems.push({ field: 'size', reason: `must be a whole number from 1 to ${MAX_PAGE_SIZE}` })
  // A cursor is the id of an event (a next link's); empty, as the first link has it, is the newest.
  const cursorOk = cursor === undefined || cursor === '' || (/^\d{1,16}$/.test(cursor) && Number(cursor) >= 1 && Number(cursor) <= MAX_EVENT_ID)
  if (!cursorOk) problems.push({ field: 'cursor', reason: 'is not a cursor of this history: use the one its Link rel="next" gives' })
  if (problems.length > 0) throw new ApiError('INVALID_PARAMETER', `Invalid query parameters: ${problems.map((p) => p.field).join(', ')}.`, problems)
  return { size: size === undefined ? DEFAULT_PAGE_SIZE : Number(size), before: cursor ? Number(cursor) : undefined }
}

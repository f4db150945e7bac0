/** Parses a list request's query string into a ListPlan; every bad parameter is a 400 naming it. */
import { Type, type TObject, type TSchema } from 'typebox'
import { ApiError, type ErrorDetail } from '../../errors.js'
import type { Field } from '../fields.js'
import {
  DEFAULT_PAGE_SIZE, MAX_OFFSET, MAX_PAGE_SIZE,
  RELEVANCE, type Comparison, type Direction, type Filter, type ListPlan, type ListSpec, type SortKey,
} from './plan.js'
import { decodeCursor } from './cursor.js'
import { MAX_FILTER_LENGTH, parseValue, valueSchema } from './values.js'
import { Int32 } from '../../schema-types.js'
import { closestName } from './suggest.js'
import { MAX_FILTER_EXPRESSION_LENGTH, parseFilterExpression } from './filter-expression.js'

export type RawQuery = Record<string, string | string[] | undefined>

/** Filter operators by field kind; `eq` is the bare `field=value`; `contains` on searchable text fields. */
const OPERATORS: Record<Field['kind'], readonly string[]> = {
  string: ['eq', 'ne', 'in'],
  integer: ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte'],
  number: ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte'],
  datetime: ['eq', 'ne', 'in', 'gt', 'gte', 'lt', 'lte'],
  uuid: ['eq', 'ne', 'in'],
  enum: ['eq', 'ne', 'in'],
  boolean: ['eq', 'ne'],
  'string[]': ['eq', 'in'],
}
const COMPARISONS = new Set(['gt', 'gte', 'lt', 'lte'])
const FILTER_KEY = /^([a-z][a-z0-9_]*)(?:\[([a-z]+)\])?$/
/** Parameters of the list itself; every other key must be a filter. */
const RESERVED = new Set(['page', 'size', 'sort', 'order', 'cursor', 'fields', 'filter', 'include', 'q'])
/** Longest `q`: more words than any search needs. */
export const MAX_SEARCH_LENGTH = 500
/** Keys that belong to `include` (src/resources/include.ts), not to the filters: `include[reviews][size]`, `fields[reviews]`. */
export const INCLUDE_KEY = /^(include|fields)\[/
/** A key's name and its operator: `price[gt]`, `sizee`. */
const KEY_PARTS = /^(.*?)(\[[^\]]*\])?$/
/** A sign before a sort field, as other APIs say "descending" (`+` arrives as a space in a query string). */
const SIGNED = /^[-+ ]/
/**
 * Longest cursor taken. One the service makes holds a row's sort keys, and those it can read back
 * are under 1,500 characters (measured: users by a name JSON escapes to 720 bytes and a 254-character
 * email, 1,480; webhooks by a 1,000-character url, 1,495). A longer one was padded, not made here.
 */
export const MAX_CURSOR_LENGTH = 4096

const operatorsOf = (field: Field, spec: ListSpec): readonly string[] => [
  ...OPERATORS[field.kind],
  ...(spec.searchable.has(field.name) ? ['contains'] : []),
  ...(field.nullable ? ['null'] : []),
]

class Problems {
  readonly details: ErrorDetail[] = []
  add(field: string, reason: string): void {
    this.details.push({ field, reason })
  }
}

function single(name: string, raw: string | string[] | undefined, problems: Problems): string | undefined {
  if (Array.isArray(raw)) {
    problems.add(name, 'must be given at most once')
    return undefined
  }
  return raw
}

function parsePositive(name: string, raw: string | undefined, fallback: number, max: number, problems: Problems): number {
  if (raw === undefined) return fallback
  const value = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN
  if (!(value >= 1 && value <= max)) {
    problems.add(name, `must be an integer from 1 to ${max}`)
    return fallback
  }
  return value
}

/**
 * The sort keys. `relevance` (how well an item matches `q`, best first) is a key only with `q`,
 * and the order when `q` comes without a sort.
 */
function parseSort(sortRaw: string | undefined, orderRaw: string | undefined, spec: ListSpec, searching: boolean, problems: Problems): SortKey[] {
  const names = sortRaw === undefined ? (searching ? ['relevance'] : []) : sortRaw.split(',')
  const orders = orderRaw === undefined ? (sortRaw === undefined && searching ? ['desc'] : []) : orderRaw.split(',')
  const keys: SortKey[] = []
  for (const name of names) {
    const field = name === 'relevance' && searching ? RELEVANCE : spec.sortable.get(name)
    if (name === 'relevance' && !searching && spec.textSearch) problems.add('sort', 'relevance needs q, the words to search for')
    else if (!field) problems.add('sort', cannotSortBy(name, names, spec))
    else if (keys.some((key) => key.field === field)) problems.add('sort', `names "${name}" twice`)
    else keys.push({ field, direction: 'asc' })
  }
  if (orders.some((order) => order !== 'asc' && order !== 'desc')) {
    problems.add('order', 'must be asc or desc, or a comma-separated list of them')
  } else if (orders.length > 1 && orders.length !== Math.max(names.length, 1)) {
    problems.add('order', 'must be one direction, or one per sort field')
  } else if (orders.length > 0) {
    const directions = orders as Direction[]
    keys.forEach((key, i) => (key.direction = directions[i] ?? directions[0]!))
  }
  // The id breaks ties; with no sort at all it is the order (UUIDv7: creation order).
  if (!keys.some((key) => key.field === spec.id)) {
    keys.push({ field: spec.id, direction: keys.length === 0 ? ((orders[0] as Direction) ?? 'asc') : 'asc' })
  }
  return keys
}

/**
 * Why a sort name is refused. A signed one (`-price`) names the parameters that say it here:
 * `sort=price&order=desc`, for every signed name of the sort.
 */
function cannotSortBy(name: string, names: string[], spec: ListSpec): string {
  if (!SIGNED.test(name) || !spec.sortable.has(name.slice(1))) return `cannot sort by "${name}"; sortable fields: ${[...spec.sortable.keys()].join(', ')}`
  const keys = names.filter((n) => spec.sortable.has(SIGNED.test(n) ? n.slice(1) : n))
  const directions = keys.map((n) => (n.startsWith('-') ? 'desc' : 'asc'))
  const order = directions.every((d) => d === directions[0]) ? directions[0] : directions.join(',')
  return `cannot sort by "${name}"; the direction goes in order: sort=${keys.map((n) => (SIGNED.test(n) ? n.slice(1) : n)).join(',')}&order=${order}`
}

/** Why `key` is refused: every parameter the list knows, its own and the filters, and the one `key` is likely a slip of. */
function unknownParameter(key: string, spec: ListSpec): string {
  const filters = [...spec.filterable.keys()]
  const [, name = key, operator] = KEY_PARTS.exec(key)!
  // The list's own parameters take no operator: `sizee` may be size, `prise[gt]` only a filter.
  const closest = closestName(name, operator === undefined ? [...RESERVED, ...filters] : filters)
  const hint = closest === undefined ? '' : ` (did you mean ${closest}${operator ?? ''}?)`
  return `is not a known parameter${hint}; list parameters: ${[...RESERVED].join(', ')}; filterable fields: ${filters.join(', ')}`
}

function parseFilter(key: string, raws: string[], spec: ListSpec, problems: Problems): Filter | undefined {
  const match = FILTER_KEY.exec(key)
  const field = match ? spec.filterable.get(match[1]!) : undefined
  if (!match || !field) {
    problems.add(key, unknownParameter(key, spec))
    return undefined
  }
  const op = match[2] ?? 'eq'
  const allowed = operatorsOf(field, spec)
  if (!allowed.includes(op)) {
    problems.add(key, `operator "${op}" is not supported on ${field.name}; use one of ${allowed.join(', ')}`)
    return undefined
  }
  if (op !== 'eq' && raws.length > 1) {
    problems.add(key, 'must be given at most once')
    return undefined
  }
  const raw = raws[0]!
  // Each value is checked below; the list as a whole is bounded too: repeat `field=` for more.
  if (op === 'in' && raw.length > MAX_FILTER_LENGTH) return void problems.add(key, `must be at most ${MAX_FILTER_LENGTH} characters; repeat ${field.name}= for more values`)
  if (op === 'null') {
    if (raw !== 'true' && raw !== 'false') return void problems.add(key, 'must be true or false')
    return { kind: 'null', field, isNull: raw === 'true' }
  }
  const texts = op === 'in' ? raw.split(',') : raws
  const values = []
  for (const text of texts) {
    const parsed = parseValue(field, text)
    if (!parsed.ok) return void problems.add(key, parsed.reason)
    values.push(parsed.value)
  }
  if (op === 'eq' || op === 'in') return { kind: 'anyOf', field, values }
  if (op === 'ne') return { kind: 'not', field, value: values[0]! }
  if (op === 'contains') return { kind: 'contains', field, value: String(values[0]) }
  if (COMPARISONS.has(op)) return { kind: 'compare', field, op: op as Comparison, value: values[0]! }
  return undefined
}

/**
 * The plan for one list request; throws INVALID_PARAMETER listing every bad parameter. `exactCount`:
 * the client asked for the total however many rows match (Prefer: count=exact).
 */
export function parseListQuery(query: RawQuery, spec: ListSpec, exactCount = false): ListPlan {
  const problems = new Problems()
  const page = parsePositive('page', single('page', query.page, problems), 1, MAX_OFFSET, problems)
  const size = parsePositive('size', single('size', query.size, problems), DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, problems)
  if ((page - 1) * size > MAX_OFFSET) problems.add('page', `is too large: (page - 1) × size must not exceed ${MAX_OFFSET}`)
  const search = parseSearch(single('q', query.q, problems), spec, problems)
  const sort = parseSort(single('sort', query.sort, problems), single('order', query.order, problems), spec, search !== undefined, problems)
  const cursor = parseCursor(single('cursor', query.cursor, problems), query.page !== undefined, sort, problems)
  const filters: Filter[] = []
  const expression = single('filter', query.filter, problems)
  if (expression !== undefined) {
    const parsed = parseFilterExpression(expression, spec)
    if (parsed.ok) filters.push(parsed.filter)
    else problems.add('filter', parsed.reason)
  }
  for (const [key, raw] of Object.entries(query)) {
    // `trashed` chooses the shelf (src/resources/trash.ts), read by the handler.
    if (RESERVED.has(key) || INCLUDE_KEY.test(key) || raw === undefined || (key === 'trashed' && spec.trash)) continue
    const filter = parseFilter(key, Array.isArray(raw) ? raw : [raw], spec, problems)
    if (filter) filters.push(filter)
  }
  if (problems.details.length > 0) {
    const names = [...new Set(problems.details.map((d) => d.field))].join(', ')
    throw new ApiError('INVALID_PARAMETER', `Invalid query parameter: ${names}.`, problems.details)
  }
  return { page, size, sort, filters, cursor, count: exactCount ? 'exact' : 'bounded', ...(search === undefined ? {} : { search }) }
}

/** `q`: words to search for, in websearch_to_tsquery's syntax, which never fails on what a user types. */
function parseSearch(raw: string | undefined, spec: ListSpec, problems: Problems): string | undefined {
  if (raw === undefined) return undefined
  if (!spec.textSearch) return void problems.add('q', 'this collection has no full-text search; filter with field[contains]= or filter= instead')
  if (raw.trim() === '') return void problems.add('q', 'must be words to search for')
  if (raw.length > MAX_SEARCH_LENGTH) return void problems.add('q', `must be at most ${MAX_SEARCH_LENGTH} characters`)
  // PostgreSQL text cannot hold U+0000.
  if (raw.includes('\u0000')) return void problems.add('q', 'must not contain U+0000')
  return raw
}

function parseCursor(raw: string | undefined, withPage: boolean, sort: SortKey[], problems: Problems): ListPlan['cursor'] {
  if (raw === undefined) return undefined
  if (withPage) return void problems.add('cursor', 'cannot be combined with page')
  if (raw.length > MAX_CURSOR_LENGTH) return void problems.add('cursor', `must be at most ${MAX_CURSOR_LENGTH} characters`)
  const nullable = sort.find((key) => key.field.nullable)
  if (nullable) return void problems.add('cursor', `cannot page by cursor when sorting by ${nullable.field.name}, which may be null`)
  if (raw === '') return { position: null }
  const position = decodeCursor(raw, sort)
  if (!position) return void problems.add('cursor', 'is not a cursor of this list with this sort; start again with cursor=')
  return { position }
}

/** What each operator's parameter holds, for the document. */
function operatorSchema(field: Field, op: string): TSchema {
  const value = valueSchema(field)
  switch (op) {
    case 'eq':
      return { ...value, description: field.kind === 'string[]' ? 'Items holding this value; repeat for any of several.' : 'Equal to; repeat for any of several.' }
    case 'in':
      return Type.String({ maxLength: MAX_FILTER_LENGTH, description: 'Any of these comma-separated values.' })
    case 'null':
      return Type.Boolean({ description: 'true: only items where it is null; false: only where it is not.' })
    case 'contains':
      return Type.String({ maxLength: MAX_FILTER_LENGTH, description: 'Contains this text, ignoring case.' })
    default:
      return { ...value, description: { ne: 'Not equal to.', gt: 'Greater than.', gte: 'At least.', lt: 'Less than.', lte: 'At most.' }[op] }
  }
}

/**
 * The query parameters of a list, as the document shows them: built from the same spec and
 * operator table the parser uses, so the two name the same parameters.
 */
/** `trashed=` on a list or a read, as the document shows it (src/resources/trash.ts). */
export const TRASHED_PARAMETER = Type.Union([Type.Literal('only'), Type.Literal('include')], {
  description: 'Admins only: `only` the items in the trash, `include` them beside the live ones. Each trashed item shows its `deleted_at`.',
})

export function listQuerySchema(spec: ListSpec, fields: TSchema, include: Record<string, TSchema> = {}): TObject {
  const sortable = [...spec.sortable.keys(), ...(spec.textSearch ? [RELEVANCE.name] : [])]
  // parseSort: names split on commas, each once; so all of them is the longest sort, and as many directions the longest order.
  const name = sortable.length > 0 ? `(${sortable.join('|')})` : '(?!)'
  const longestOrder = 'desc,'.repeat(Math.max(sortable.length, 1)).length - 1
  const filters: Record<string, TSchema> = {}
  for (const field of spec.filterable.values()) {
    for (const op of operatorsOf(field, spec)) filters[op === 'eq' ? field.name : `${field.name}[${op}]`] = Type.Optional(operatorSchema(field, op))
  }
  return Type.Object({
    page: Type.Optional(Int32({ minimum: 1, maximum: MAX_OFFSET, default: 1, description: 'The page, from 1; not with cursor.' })),
    size: Type.Optional(Int32({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Items per page.' })),
    sort: Type.Optional(Type.String({
      pattern: `^${name}(,${name})*$`,
      maxLength: sortable.join(',').length,
      description: `Comma-separated fields to sort by, each once: ${sortable.join(', ')}. The id breaks ties.`,
    })),
    order: Type.Optional(Type.String({ pattern: '^(asc|desc)(,(asc|desc))*$', maxLength: longestOrder, description: 'asc or desc: one for every sort field, or one per field.' })),
    cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_LENGTH, description: 'Keyset paging: empty for the first page, then the value from a Link; not with page.' })),
    fields: Type.Optional(fields),
    ...(spec.trash ? { trashed: Type.Optional(TRASHED_PARAMETER) } : {}),
    ...Object.fromEntries(Object.entries(include).map(([name, schema]) => [name, Type.Optional(schema)])),
    ...(spec.textSearch
      ? {
          q: Type.Optional(Type.String({
            minLength: 1,
            maxLength: MAX_SEARCH_LENGTH,
            description:
              `Words to search for in ${Object.entries(spec.textSearch).map(([name, weight]) => `${name} (${weight})`).join(', ')}, weighted A to D, as a search box takes them: ` +
              '"a phrase", or, -word to leave out. Without sort, the best matches come first (sort=relevance).',
          })),
        }
      : {}),
    filter: Type.Optional(Type.String({
      maxLength: MAX_FILTER_EXPRESSION_LENGTH,
      description:
        'An expression over the filterable fields (AIP-160): comparisons `= != < <= > >= :` (`:` contains text, or has for an array), ' +
        'values as numbers, "strings", true, false or null, joined by AND or OR (both at one level need parentheses), NOT or - before a term. ' +
        'A relation\'s field with a dot (author.name; for a list of them, any one: reviews.rating >= 4). ' +
        `At most ${MAX_FILTER_EXPRESSION_LENGTH} characters, 20 comparisons, 5 levels. Combines with the other filters by AND. ` +
        'Example: status = "active" AND (price < 10 OR name : "mug").',
    })),
    ...filters,
  })
}

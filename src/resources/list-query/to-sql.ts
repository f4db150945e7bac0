/**
 * Translates a ListPlan into one SQL statement: the page and its bounded count in one round trip
 * and one snapshot. Paging, sorting and filtering all happen in SQL; values are parameters.
 */
import type { Field } from '../fields.js'
import { shelfCondition, type Scope } from '../shelf.js'
import { RELEVANCE, type CursorPosition, type Filter, type ListPlan } from './plan.js'

export interface ListStatement {
  text: string
  values: unknown[]
}

export interface ListTable {
  /** The table, quoted. */
  table: string
  /** A subquery for the table's kept row count (migration 20261126100000_row_counts): null when it keeps none. */
  keptCount: string
  /** The select list of a page's rows, by column, on alias `r`. */
  select: string
  /** The table keeps a trash: a statement reaches the shelf its scope names (store.ts, TRASHED). */
  trash: boolean
}

/** The count column of the statement's rows; no column starts with an underscore. */
export const TOTAL = '__total'
/** True when the count is every matching row (the table's kept count), not one bounded by the limit. */
export const COMPLETE = '__complete'

export const quote = (identifier: string) => `"${identifier.replace(/"/g, '""')}"`
const columnOf = (field: Field) => quote(field.name)

/** `%` and `_` are LIKE's wildcards and backslash its escape: a search for them finds them. */
const likePattern = (value: string) => `%${value.replace(/[\\%_]/g, '\\$&')}%`

/** The table's kept row count: the sum of its slots, null when it has none. Built once per table. */
export const keptCountOf = (table: string) => `SELECT sum("n")::bigint AS n FROM "row_counts" WHERE "table_name" = '${table.replace(/'/g, "''")}'`

const COMPARATORS = { gt: '>', gte: '>=', lt: '<', lte: '<=' } as const

/** The statement's values, numbered as they are added; the filters' placeholders serve both the count and the page. */
class Values {
  readonly list: unknown[] = []
  add(value: unknown): string {
    this.list.push(value)
    return `$${this.list.length}`
  }
}

/** What a condition is written for: the row's table (quoted), and who asks (a related item must be one they may read). */
interface Context {
  table: string
  caller: unknown
}

function condition(filter: Filter, values: Values, context: Context): string {
  switch (filter.kind) {
    case 'all':
      return `(${filter.filters.map((inner) => condition(inner, values, context)).join(' AND ')})`
    case 'any':
      return `(${filter.filters.map((inner) => condition(inner, values, context)).join(' OR ')})`
    case 'negate':
      return `NOT (${condition(filter.filter, values, context)})`
    case 'related': {
      // Inside, an unqualified column is the related row's: the related table is the nearest scope.
      const { relation } = filter
      const readable = relation.readable(context.caller, 'rel', (value) => values.add(value))
      if (readable === false) return 'false'
      const joined = relation.kind === 'one' ? `rel."id" = ${context.table}.${quote(relation.column)}` : `rel.${quote(relation.column)} = ${context.table}."id"`
      const rule = readable === true ? '' : ` AND ${readable}`
      return `EXISTS (SELECT FROM ${relation.table} rel WHERE ${joined} AND ${condition(filter.filter, values, context)}${rule})`
    }
  }
  const column = columnOf(filter.field)
  switch (filter.kind) {
    case 'anyOf':
      // An array field matches when it holds any of the values (a GIN index can serve `&&`).
      if (filter.field.kind === 'string[]') return `${column} && ${values.add(filter.values)}`
      return filter.values.length === 1 ? `${column} = ${values.add(filter.values[0])}` : `${column} = ANY(${values.add(filter.values)})`
    case 'not':
      return `${column} <> ${values.add(filter.value)}`
    case 'compare':
      // An enum compares in its declared order (PostgreSQL's ENUM order, the schema's list).
      return `${column} ${COMPARATORS[filter.op]} ${values.add(filter.value)}`
    case 'contains':
      return `${column} ILIKE ${values.add(likePattern(filter.value))}`
    case 'null':
      return `${column} IS ${filter.isNull ? '' : 'NOT '}NULL`
  }
}

const flip = (direction: 'asc' | 'desc') => (direction === 'asc' ? 'desc' : 'asc')

/**
 * Rows after (or, backward, before) a keyset position. With every key in one direction it is a
 * row comparison, `(k1, k2) > ($1, $2)`, which an index on the keys answers with one seek. Mixed
 * directions expand to (k1 > v1) OR (k1 = v1 AND k2 < v2) ..., with a redundant bound on the
 * first key that gives such an index a place to start.
 */
function keyset(plan: ListPlan, position: CursorPosition, values: Values, columnOf: (field: Field) => string): string {
  const ascending = plan.sort.map((key) => (key.direction === 'asc') !== position.backward)
  const columns = plan.sort.map((key) => columnOf(key.field))
  const params = position.values.map((value) => values.add(value))
  if (ascending.every((a) => a === ascending[0])) return `(${columns.join(', ')}) ${ascending[0] ? '>' : '<'} (${params.join(', ')})`
  const alternatives = columns.map((column, i) => {
    const equal = columns.slice(0, i).map((prior, j) => `${prior} = ${params[j]}`)
    return `(${[...equal, `${column} ${ascending[i] ? '>' : '<'} ${params[i]}`].join(' AND ')})`
  })
  return `${columns[0]} ${ascending[0] ? '>=' : '<='} ${params[0]} AND (${alternatives.join(' OR ')})`
}

/**
 * The conditions a row of `target` in `scope` meets to match the plan's filters and search;
 * `query`, the search's tsquery; `everyLive`, true when they match every live item (the kept
 * count counts those).
 */
function conditions(target: Pick<ListTable, 'table' | 'trash'>, plan: ListPlan, scope: Scope, values: Values, caller: unknown) {
  // q: the words, once; the rows whose words match them (the GIN index).
  const query = plan.search === undefined ? undefined : `websearch_to_tsquery('english', ${values.add(plan.search)})`
  const filtering = [
    ...Object.entries(scope).map(([column, value]) => `${quote(column)} = ${values.add(value)}`),
    ...plan.filters.map((filter) => condition(filter, values, { table: target.table, caller })),
    ...(query ? [`"search" @@ ${query}`] : []),
  ]
  const shelf = shelfCondition(target.trash, scope)
  const everyLive = filtering.length === 0 && (!target.trash || shelf === '"deleted_at" IS NULL')
  return { matching: shelf ? [...filtering, shelf] : filtering, query, everyLive }
}

/**
 * The rows of `table` (their columns `select`) the plan's filters and search match in `scope`, at
 * most `limit`, in the order of their ids, locked (`lock`: FOR NO KEY UPDATE or FOR UPDATE) until
 * the transaction ends: what a change by filter changes.
 */
export function matchingStatement(target: Pick<ListTable, 'table' | 'trash'>, select: string, plan: ListPlan, scope: Scope, limit: number, lock: string, caller: unknown): ListStatement {
  const values = new Values()
  const { matching } = conditions(target, plan, scope, values, caller)
  return { text: `SELECT ${select} FROM ${target.table}${matching.length === 0 ? '' : ` WHERE ${matching.join(' AND ')}`} ORDER BY "id" LIMIT ${limit} ${lock}`, values: values.list }
}

/**
 * After the row whose sort-key values are `last`, in the plan's order, for an export's next page.
 * With no nullable key it is the list's keyset; else each key's "after" spelt out as PostgreSQL
 * orders NULL (last when ascending, first when descending), and equality as IS NOT DISTINCT FROM.
 */
function after(plan: ListPlan, last: readonly unknown[], values: Values, columnOf: (field: Field) => string): string {
  if (!plan.sort.some((key) => key.field.nullable)) return keyset(plan, { values: last as CursorPosition['values'], backward: false }, values, columnOf)
  const params = last.map((value) => (value === null ? null : values.add(value)))
  const alternatives = plan.sort.map((key, i) => {
    const equal = plan.sort.slice(0, i).map((prior, j) => (params[j] === null ? `${columnOf(prior.field)} IS NULL` : `${columnOf(prior.field)} = ${params[j]}`))
    const column = columnOf(key.field)
    const param = params[i]
    const beyond =
      key.direction === 'asc'
        ? param === null ? 'false' : `(${column} > ${param} OR ${column} IS NULL)`
        : param === null ? `${column} IS NOT NULL` : `${column} < ${param}`
    return `(${[...equal, beyond].join(' AND ')})`
  })
  return `(${alternatives.join(' OR ')})`
}

/**
 * One page of an export (src/resources/export/): the rows of `target` (`select`: their columns)
 * the plan matches in `scope`, in its order, after the row whose sort keys are `last` (none: from
 * the start), at most `limit`. No count and no offset: an export reads every matching row, page
 * after page, each an index seek from where the last ended. With q, each row's rank as `relevance`.
 */
export function exportPageStatement(target: Pick<ListTable, 'table' | 'trash'>, select: string, plan: ListPlan, scope: Scope, last: readonly unknown[] | undefined, limit: number, caller: unknown): ListStatement {
  const values = new Values()
  const { matching, query } = conditions(target, plan, scope, values, caller)
  const rank = query && `ts_rank("search", ${query})`
  const sortColumn = (field: Field) => (field === RELEVANCE ? rank! : columnOf(field))
  const all = last ? [...matching, after(plan, last, values, sortColumn)] : matching
  const order = plan.sort.map((key) => `${sortColumn(key.field)} ${key.direction.toUpperCase()}`).join(', ')
  return {
    text: `SELECT ${select}${rank ? `, ${rank} AS "${RELEVANCE.name}"` : ''} FROM ${target.table}${all.length === 0 ? '' : ` WHERE ${all.join(' AND ')}`} ORDER BY ${order} LIMIT ${limit}`,
    values: values.list,
  }
}

/**
 * How many rows of `target` the plan matches in `scope`, counted up to `limit + 1` at most: enough
 * to say whether there are more than `limit` (an export's EXPORT_MAX_ROWS) without counting a
 * larger table to its end.
 */
export function boundedCountStatement(target: Pick<ListTable, 'table' | 'trash'>, plan: ListPlan, scope: Scope, limit: number, caller: unknown): ListStatement {
  const values = new Values()
  const { matching } = conditions(target, plan, scope, values, caller)
  const where = matching.length === 0 ? '' : ` WHERE ${matching.join(' AND ')}`
  return { text: `SELECT count(*) AS n FROM (SELECT FROM ${target.table}${where} LIMIT ${limit + 1}) m`, values: values.list }
}

/**
 * The statement for a list page. Its rows are the page's (one more than the page size, to know
 * whether another follows; backward cursor pages nearest first), each with the count of matching
 * rows in TOTAL: the table's kept count when nothing is filtered (COMPLETE), else counted up to
 * `countLimit + 1` unless `exact`. An empty page is one row of nulls with the count.
 *
 * The page is a deferred join: the ids first, in order, which an index on the sort keys answers
 * without visiting the table, then those rows. A plain OFFSET fetches every skipped row: on
 * 10,000 products, 1,698 pages a second against 7,958 (docs/performance.md).
 */
export function listStatement(
  target: ListTable,
  plan: ListPlan,
  scope: Scope,
  countLimit: number,
  /** More of each row's select list (`include=`): expressions on the row `outer`, their values added with `add`. */
  extra?: (outer: string, add: (value: unknown) => string) => string,
  /** Who asks: a filter through a relation matches only related items they may read. */
  caller: unknown = null,
): ListStatement {
  const values = new Values()
  const { matching, query, everyLive } = conditions(target, plan, scope, values, caller)
  const rank = query && `ts_rank("search", ${query})`
  const sortColumn = (field: Field) => (field === RELEVANCE ? rank! : columnOf(field))
  const where = matching.length === 0 ? '' : ` WHERE ${matching.join(' AND ')}`
  const position = plan.cursor?.position
  const reversed = position?.backward === true
  // Inside, by the table's columns; outside, by the page's (`p`), which have the same names.
  const order = (name: (field: Field) => string) =>
    plan.sort.map((key) => `${name(key.field)} ${(reversed ? flip(key.direction) : key.direction).toUpperCase()}`).join(', ')
  const seek = position ? [keyset(plan, position, values, sortColumn)] : []
  const offset = plan.cursor ? '' : ` OFFSET ${values.add((plan.page - 1) * plan.size)}`
  // The limits are written into the text (integers the service chose: the size is 1 to 100): as
  // parameters, a prepared statement's generic plan guesses 1,000 rows for LIMIT $n and joins the
  // page to the table with a hash over a sequential scan (the peer harness's page: 1,132 → 2,006 a second).
  // With q, each row's rank comes out of the ids as `relevance`, for the page's order and its cursors.
  const ids = (source: string, conditions: string[]) => {
    const all = [...conditions, ...seek]
    return `SELECT "id"${rank ? `, ${rank} AS "${RELEVANCE.name}"` : ''} FROM ${source}${all.length === 0 ? '' : ` WHERE ${all.join(' AND ')}`} ORDER BY ${order(sortColumn)} LIMIT ${plan.size + 1}${offset}`
  }
  const more = (rank ? `, i."${RELEVANCE.name}"` : '') + (extra?.('r', (value) => values.add(value)) ?? '')
  const page = (source: string) =>
    `LEFT JOIN LATERAL (SELECT ${target.select}${more} FROM (${source}) i JOIN ${target.table} r ON r."id" = i."id") p ON true ` +
    `ORDER BY ${order((field) => `p.${columnOf(field)}`)}`
  const bound = plan.count === 'exact' ? '' : ` LIMIT ${countLimit + 1}`
  if (plan.count === 'bounded' && !rank && plan.filters.some((filter) => filter.kind === 'contains')) {
    // A search (a trigram index) visits every candidate row to recheck it: the matches are read
    // once, for the count and, when they are all there (at most the limit), for the page too;
    // counted and paged apart, they were read twice (about 4,000 matches in a million rows: 8 ms against 4).
    const keys = [...new Set(['"id"', ...plan.sort.map((key) => columnOf(key.field))])].join(', ')
    return {
      text:
        `WITH m AS MATERIALIZED (SELECT ${keys} FROM ${target.table}${where}${bound}) ` +
        `SELECT c.n AS "${TOTAL}", false AS "${COMPLETE}", p.* FROM (SELECT count(*) AS n FROM m) c ` +
        page(`(${ids('m', [`c.n <= ${countLimit}`])}) UNION ALL (${ids(target.table, [...matching, `c.n > ${countLimit}`])})`),
      values: values.list,
    }
  }
  const counted = `SELECT count(*) FROM (SELECT FROM ${target.table}${where}${bound}) m`
  // Every row of the table: its kept count when it has one; COALESCE runs the counting subquery
  // only when it has none.
  const count =
    everyLive
      ? `SELECT COALESCE(k.n, (${counted})) AS n, k.n IS NOT NULL AS complete FROM (${target.keptCount}) k`
      : `SELECT (${counted}) AS n, false AS complete`
  return { text: `SELECT c.n AS "${TOTAL}", c.complete AS "${COMPLETE}", p.* FROM (${count}) c ${page(ids(target.table, matching))}`, values: values.list }
}

/** What an aggregate statement computes: the group keys, and each metric by its function, its field and its name in the answer. */
export interface AggregateQuery {
  groupBy: readonly Field[]
  metrics: readonly { fn: 'count' | 'sum' | 'avg' | 'min' | 'max'; name: string; field?: Field }[]
  /** The filters and search, as a list's. */
  list: ListPlan
}

/**
 * Each function in SQL. An average is rounded to two decimals, as amounts are kept (a cent), in
 * the database: it is exact there, and the answer's number is the decimal it shows.
 */
const AGGREGATE_FUNCTIONS = {
  count: () => 'count(*)',
  sum: (column: string) => `sum(${column})`,
  avg: (column: string) => `round(avg(${column}), 2)`,
  min: (column: string) => `min(${column})`,
  max: (column: string) => `max(${column})`,
} as const

/**
 * The statement for an aggregate: the rows of `table` in `scope` that the list plan's filters and
 * search match (the same conditions as a list's), grouped by the keys and sorted by them (an
 * enum in its declared order, nulls last), at most `limit` groups. Without keys, one row over
 * every matching row, which an empty set makes too (a count of 0, nulls for the rest).
 */
export function aggregateStatement(target: Pick<ListTable, 'table' | 'trash'>, query: AggregateQuery, scope: Scope, limit: number, caller: unknown): ListStatement {
  const values = new Values()
  const { matching } = conditions(target, query.list, scope, values, caller)
  const keys = query.groupBy.map(columnOf)
  const metrics = query.metrics.map(({ fn, name, field }) => `${AGGREGATE_FUNCTIONS[fn](field ? columnOf(field) : '')} AS ${quote(name)}`)
  const where = matching.length === 0 ? '' : ` WHERE ${matching.join(' AND ')}`
  // The limit is written in (an integer the service chose), as a list's page size is.
  const grouped = keys.length === 0 ? '' : ` GROUP BY ${keys.join(', ')} ORDER BY ${keys.join(', ')} LIMIT ${limit}`
  return { text: `SELECT ${[...keys, ...metrics].join(', ')} FROM ${target.table}${where}${grouped}`, values: values.list }
}

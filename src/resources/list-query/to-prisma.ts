/** Translates a ListPlan into Prisma arguments: the paging, sorting and filtering all happen in SQL. */
import type { Field } from '../fields.js'
import type { Comparison, CursorPosition, Filter, FilterValue, ListPlan } from './plan.js'

type Where = Record<string, unknown>

/**
 * `field op value`. Prisma has no order comparisons on enums (`gt` there was a 500), and an enum
 * sorts in its declared order (PostgreSQL's ENUM order, the schema's list), so `> v` is "one of
 * the values declared after v".
 */
function compare(field: Field, op: Comparison, value: FilterValue): Where {
  if (field.kind !== 'enum') return { [field.column]: { [op]: value } }
  const values = field.values!
  const at = values.indexOf(value as string)
  const chosen = { gt: values.slice(at + 1), gte: values.slice(at), lt: values.slice(0, at), lte: values.slice(0, at + 1) }[op]
  return { [field.column]: { in: chosen } }
}

/** Prisma passes `contains` into ILIKE as it is: `%` and `_` would be wildcards. Backslash is LIKE's escape. */
const escapeLike = (value: string): string => value.replace(/[\\%_]/g, '\\$&')

function whereOf(filter: Filter): Where {
  const column = filter.field.column
  const isArray = filter.field.kind === 'string[]'
  switch (filter.kind) {
    case 'anyOf':
      if (isArray) return { [column]: filter.values.length === 1 ? { has: filter.values[0] } : { hasSome: filter.values } }
      return { [column]: filter.values.length === 1 ? filter.values[0] : { in: filter.values } }
    case 'not':
      return { [column]: { not: filter.value } }
    case 'compare':
      return compare(filter.field, filter.op, filter.value)
    case 'contains':
      return { [column]: { contains: escapeLike(filter.value), mode: 'insensitive' } }
    case 'null':
      return { [column]: filter.isNull ? null : { not: null } }
  }
}

export interface PrismaListArgs {
  /** The list's rows: the total counts these. */
  where: Where
  /** With a cursor: where the page starts, within `where`. */
  keyset: Where | undefined
  orderBy: Record<string, 'asc' | 'desc'>[]
  skip: number
  take: number
}

const flip = (direction: 'asc' | 'desc') => (direction === 'asc' ? 'desc' : 'asc')

/**
 * Rows after (or before) a keyset position: (k1 > v1) OR (k1 = v1 AND k2 > v2) OR ..., with `<`
 * for descending keys. The last key is the id, so the order is total.
 */
function keysetWhere(plan: ListPlan, position: CursorPosition): Where {
  const ascending = (i: number) => (plan.sort[i]!.direction === 'asc') !== position.backward
  const first = plan.sort[0]!
  return {
    AND: [
      // Redundant, but it gives an index on the sort keys a place to start: PostgreSQL cannot
      // seek on the OR below, and would otherwise scan from the first row (cost growing with depth).
      compare(first.field, ascending(0) ? 'gte' : 'lte', position.values[0]!),
      {
        OR: plan.sort.map((key, i) => {
          const equal = plan.sort.slice(0, i).map((prior, j) => ({ [prior.field.column]: position.values[j] }))
          return { AND: [...equal, compare(key.field, ascending(i) ? 'gt' : 'lt', position.values[i]!)] }
        }),
      },
    ],
  }
}

/** `scope` holds conditions every row must meet whatever the query says (the parent of a nested list). */
export function toPrismaArgs(plan: ListPlan, scope: Where): PrismaListArgs {
  const conditions = plan.filters.map(whereOf)
  const where = conditions.length === 0 ? scope : { AND: [scope, ...conditions] }
  if (plan.cursor) {
    const position = plan.cursor.position
    return {
      where,
      keyset: position ? keysetWhere(plan, position) : undefined,
      // Backward reads the rows before the position nearest first; the page is reversed after.
      orderBy: plan.sort.map((key) => ({ [key.field.column]: position?.backward ? flip(key.direction) : key.direction })),
      skip: 0,
      // One more than the page: whether another page follows.
      take: plan.size + 1,
    }
  }
  return {
    where,
    keyset: undefined,
    orderBy: plan.sort.map((key) => ({ [key.field.column]: key.direction })),
    skip: (plan.page - 1) * plan.size,
    take: plan.size,
  }
}

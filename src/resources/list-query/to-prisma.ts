/** Translates a ListPlan into Prisma arguments: the paging, sorting and filtering all happen in SQL. */
import type { Filter, ListPlan } from './plan.js'

type Where = Record<string, unknown>

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
      return { [column]: { [filter.op]: filter.value } }
    case 'contains':
      return { [column]: { contains: escapeLike(filter.value), mode: 'insensitive' } }
    case 'null':
      return { [column]: filter.isNull ? null : { not: null } }
  }
}

export interface PrismaListArgs {
  where: Where
  orderBy: Record<string, 'asc' | 'desc'>[]
  skip: number
  take: number
}

/** `scope` holds conditions every row must meet whatever the query says (the parent of a nested list). */
export function toPrismaArgs(plan: ListPlan, scope: Where): PrismaListArgs {
  const conditions = plan.filters.map(whereOf)
  return {
    where: conditions.length === 0 ? scope : { AND: [scope, ...conditions] },
    orderBy: plan.sort.map((key) => ({ [key.field.column]: key.direction })),
    skip: (plan.page - 1) * plan.size,
    take: plan.size,
  }
}

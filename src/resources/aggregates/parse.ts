/**
 * Parses an aggregates request's query string: `group_by`, `metrics`, and the list's filters
 * (brackets, `filter=`, `q=`) through the list's own parser, so that a filter means here what it
 * means on the list. Every bad parameter is listed in one 400.
 */
import { ApiError, type ErrorDetail } from '../../errors.js'
import type { Field } from '../fields.js'
import { parseListQuery, type RawQuery } from '../list-query/parse.js'
import type { ListPlan, ListSpec } from '../list-query/plan.js'
import { closestName } from '../list-query/suggest.js'
import type { AggregateSpec, Metric } from './spec.js'

/** The most groups an answer has; more is a 400 (TOO_MANY_GROUPS), never a silently cut answer. */
export const MAX_GROUPS = 1000
/** Longest `group_by` or `metrics`: far more than every name a collection declares, once each. */
export const MAX_AGGREGATE_PARAMETER_LENGTH = 500
/** What `metrics` is when the request leaves it out: how many items match. */
const DEFAULT_METRICS = ['count']
/**
 * A list's parameters that choose a page or its shape: an aggregate reads every matching item and
 * answers every group, sorted by its keys. Given here, they would be ignored: a 400 says so.
 */
const NOT_TAKEN = ['page', 'size', 'cursor', 'sort', 'order', 'fields', 'include']

/** Whether a list's parameter (`sort`, `include[reviews][size]`) is one an aggregate does not take. */
export const notTakenByAggregates = (key: string): boolean => NOT_TAKEN.some((name) => key === name || key.startsWith(`${name}[`))

/** One aggregates request, planned: its groups, its metrics, and the list plan that carries its filters. */
export interface AggregatePlan {
  readonly kind: 'aggregate'
  /** The keys of each group, in the order asked for (also the answer's order); none: one row over every matching item. */
  readonly groupBy: readonly Field[]
  readonly metrics: readonly Metric[]
  /** The filters and search, as the list parses them; its paging and sort are not used. */
  readonly list: ListPlan
}

/** The names of a comma-separated parameter, each once and each known; problems otherwise. */
function names<T>(parameter: string, raw: string | string[] | undefined, known: ReadonlyMap<string, T>, what: string, details: ErrorDetail[]): T[] | undefined {
  if (raw === undefined) return undefined
  const problem = (reason: string) => void details.push({ field: parameter, reason })
  if (Array.isArray(raw)) return problem(`must be given at most once: name every ${what} in one comma-separated list`)
  if (raw.length > MAX_AGGREGATE_PARAMETER_LENGTH) return problem(`must be at most ${MAX_AGGREGATE_PARAMETER_LENGTH} characters`)
  const allowed = [...known.keys()]
  const chosen: T[] = []
  const seen = new Set<string>()
  for (const name of raw.split(',')) {
    const found = known.get(name)
    if (name === '') return problem(`must be a comma-separated list of ${what}s: ${allowed.join(', ')}`)
    if (seen.has(name)) return problem(`names "${name}" twice`)
    if (found === undefined) {
      const hint = closestName(name, allowed)
      return problem(`has no ${what} "${name}"${hint ? ` (did you mean ${hint}?)` : ''}; ${what}s: ${allowed.join(', ')}`)
    }
    seen.add(name)
    chosen.push(found)
  }
  return chosen
}

/** The plan of one aggregates request; throws INVALID_PARAMETER listing every bad parameter. */
export function parseAggregateQuery(query: RawQuery, spec: AggregateSpec, listSpec: ListSpec): AggregatePlan {
  const details: ErrorDetail[] = []
  const groupBy = names('group_by', query.group_by, spec.groupable, 'groupable field', details) ?? []
  const metrics = names('metrics', query.metrics, spec.metrics, 'metric', details) ?? DEFAULT_METRICS.map((name) => spec.metrics.get(name)!)
  const filters: RawQuery = {}
  for (const [key, value] of Object.entries(query)) {
    if (notTakenByAggregates(key)) details.push({ field: key, reason: `is not taken by aggregates: every matching item counts, and every group is answered, sorted by its keys` })
    else if (key !== 'group_by' && key !== 'metrics') filters[key] = value
  }
  let list: ListPlan | undefined
  try {
    list = parseListQuery(filters, listSpec)
  } catch (error) {
    if (!(error instanceof ApiError)) throw error
    details.push(...error.details)
  }
  if (details.length > 0 || !list) {
    const named = [...new Set(details.map((detail) => detail.field))].join(', ')
    throw new ApiError('INVALID_PARAMETER', `Invalid query parameter: ${named}.`, details)
  }
  return { kind: 'aggregate', groupBy, metrics, list }
}

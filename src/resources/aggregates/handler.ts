/**
 * GET (and HEAD) of `/{collection}/aggregates`: parse (group_by, metrics, the list's filters) ->
 * place (the list's row rules: a customer's own orders, a nested collection's parent) -> the
 * field rules -> one statement -> represent; conditional on its ETag as a list page is.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { standingOf, who, type Standing } from '../../auth/access.js'
import { ApiError } from '../../errors.js'
import { entityTag } from '../../http/conditional.js'
import type { Params } from '../caller-access.js'
import type { HandlerContext } from '../handler-context.js'
import type { RawQuery } from '../list-query/parse.js'
import { onShelf, shelfOf } from '../trash.js'
import { conditionalRead } from '../read-handlers.js'
import { currentTag, listTag } from '../revalidation.js'
import type { Scope } from '../store.js'
import { MAX_GROUPS, parseAggregateQuery, type AggregatePlan } from './parse.js'
import type { AggregateViews } from './represent.js'

/**
 * The caller's standing towards every item the aggregate reads: the owner when the row rules
 * keep them to their own items, else as towards any item (a parent's owner, an admin, a user).
 */
function standingOver(context: HandlerContext, request: FastifyRequest, scope: Scope, placed: () => Standing): Standing {
  const { ownership } = context.collection
  if (ownership.kind !== 'own') return placed()
  return request.caller !== null && scope[ownership.column] === request.caller.user.id ? 'owner' : standingOf(request.caller)
}

/**
 * A field the caller may not read is neither grouped by nor aggregated for them (a product's
 * cost): its sums would tell what its values are. 403 naming each one.
 */
function checkReadable(context: HandlerContext, plan: AggregatePlan, standing: Standing): void {
  const { hidden } = context.permissions[standing]
  const used = [...plan.groupBy.map((field) => `group_by ${field.name}`), ...plan.metrics.flatMap((metric) => (metric.field ? [`metrics ${metric.field.name}`] : []))]
  // One detail per parameter and field: avg:cost and max:cost are one refusal of cost.
  const refused = [...new Set(used)].map((use) => use.split(' ') as [string, string]).filter(([, name]) => hidden.has(name))
  if (refused.length === 0) return
  const rules = context.collection.options.fieldAccess ?? {}
  const details = refused.map(([parameter, name]) => ({ field: parameter, reason: `${name} may only be read by ${who(rules[name]!.read!)}` }))
  throw new ApiError('FORBIDDEN', `You may not group or aggregate by ${[...new Set(refused.map(([, name]) => name))].join(', ')}.`, details)
}

export const aggregatesHandler = (context: HandlerContext, views: AggregateViews) =>
  async function aggregates(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    const { collection, store, authorize, placement, listSpec, versions, shows, representation, readYourWrites } = context
    authorize(request, 'list')
    const shelf = shelfOf(collection, request, 'list')
    const plan = parseAggregateQuery(request.query as RawQuery, collection.aggregates!, listSpec)
    const placed = await placement(request, 'list', request.params)
    const { standing } = placed
    const scope = onShelf(placed.scope, shelf)
    checkReadable(context, plan, standingOver(context, request, scope, standing))
    versions.follow()
    // The client's answer is current: a 304 without reading it, as a list page's.
    const current = await currentTag(request, representation, versions, shows, readYourWrites.lastWrite)
    if (current) return conditionalRead(request, reply, undefined, { etag: current }, collection.options.cacheMaxAge)
    const { on, at: readTo } = await readYourWrites.pageReads(request, versions.readTo)
    // One more than the most an answer holds: to know there are more, not to answer them.
    const rows = await store.aggregate(plan, scope, MAX_GROUPS + 1, on, request.caller)
    if (rows.length > MAX_GROUPS) {
      throw new ApiError('TOO_MANY_GROUPS', `More than ${MAX_GROUPS} groups: group by fewer fields, or filter the items.`, [
        { field: 'group_by', reason: `makes more than ${MAX_GROUPS} groups of the matching items` },
      ])
    }
    const body = rows.map((row) => views.represent(row, plan))
    const etag = listTag(request, representation, entityTag(body), readTo?.horizon)
    return conditionalRead(request, reply, body, { etag }, collection.options.cacheMaxAge)
  }

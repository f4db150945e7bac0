/**
 * PATCH and DELETE on a collection's path: every item its filters match, each changed as a PATCH
 * or a DELETE of it alone would change it (its field and state rules, its hooks, its events), all
 * in one transaction (DESIGN "Writing many"). Admins only, at least one filter, and
 * `Prefer: max-affected=N`: the most items the caller means to change. When more match, the
 * answer is 400 TOO_MANY_AFFECTED and nothing changes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isAdmin } from '../auth/access.js'
import type { Transaction } from '../db/client.js'
import { ApiError, unauthenticated, within } from '../errors.js'
import { preferenceApplied, preferences } from '../http/prefer.js'
import type { Params } from './caller-access.js'
import { bodyOf } from './field-selection.js'
import type { HandlerContext } from './handler-context.js'
import { changeLocked, inTransaction } from './in-transaction.js'
import { parseListQuery, type RawQuery } from './list-query/parse.js'
import type { ListPlan } from './list-query/plan.js'
import type { Row } from './represent.js'
import { TRASHED, type Scope } from './store.js'
import { movedOn, onShelf, restoreLocked, restoringBody, shelfOf } from './trash.js'
import { validBody, writeOnlyColumns, type WriteRequest } from './write-steps.js'

/** What a list takes that a change by filter does not: it changes every match, not a page. */
const PAGING = ['page', 'size', 'cursor', 'sort', 'order', 'include']

/** The checks every change by filter makes first: the caller, the filters, the most it may change. */
async function planOf(context: HandlerContext, request: FastifyRequest<{ Params: Params }>, action: 'update' | 'delete'): Promise<{ plan: ListPlan; most: number; scope: Scope }> {
  context.authorize(request, action)
  if (!request.caller) throw unauthenticated()
  if (!isAdmin(request.caller)) throw new ApiError('FORBIDDEN', `Only admins change ${context.collection.name} by filter; change them one by one.`)
  const shelf = shelfOf(context.collection, request, action)
  const query = request.query as RawQuery
  const paging = PAGING.filter((name) => query[name] !== undefined || Object.keys(query).some((key) => key.startsWith(`${name}[`)))
  if (paging.length > 0) {
    throw new ApiError('INVALID_PARAMETER', `A change by filter changes every item that matches: ${paging.join(', ')} cannot be given.`, paging.map((name) => ({ field: name, reason: 'is not taken by a change by filter' })))
  }
  const plan = parseListQuery(query, context.listSpec)
  if (plan.filters.length === 0 && plan.search === undefined) {
    throw new ApiError('INVALID_PARAMETER', `A change by filter needs at least one filter: it would change every one of ${context.collection.name}.`, [{ field: 'filter', reason: 'is required: at least one filter' }])
  }
  const stated = preferences(request).get('max-affected')
  const most = stated !== undefined && /^\d{1,9}$/.test(stated) ? Number(stated) : NaN
  if (!(most >= 1 && most <= context.bulkMaxItems)) {
    throw new ApiError('BAD_REQUEST', `A change by filter needs Prefer: max-affected=N, the most items you mean to change (1 to ${context.bulkMaxItems}).`, [
      { field: 'Prefer', reason: `must state max-affected, from 1 to ${context.bulkMaxItems}` },
    ])
  }
  // Each item's change would need its own If-Match, which one request cannot carry.
  if (context.collection.options.requireIfMatch) {
    throw new ApiError('PRECONDITION_REQUIRED', `Changes to ${context.collection.name} need If-Match with each item's ETag: change them one by one.`)
  }
  const { scope } = await context.placement(request, 'list', request.params)
  return { plan, most, scope: onShelf(scope, shelf) }
}

/** The matching rows, locked; 400 when there are more than `most`. */
async function matching(context: HandlerContext, request: FastifyRequest, tx: Transaction, plan: ListPlan, scope: Scope, most: number, strength: 'change' | 'delete'): Promise<Row[]> {
  const rows = await context.store.lockMatching(tx, plan, scope, most + 1, strength, request.caller)
  if (rows.length > most) {
    throw new ApiError('TOO_MANY_AFFECTED', `More than ${most} ${most === 1 ? 'item matches' : 'items match'} (Prefer: max-affected=${most}); nothing was changed. Narrow the filters, or allow more.`, [
      { field: 'Prefer', reason: `max-affected=${most}, and more items match` },
    ])
  }
  return rows
}

/** Each item's error names the item. */
const ofItem = (row: Row, error: unknown) => within(`items[${row.id as string}]`, error)

export const patchManyHandler = (context: HandlerContext) =>
  async function patchMany(request: WriteRequest, reply: FastifyReply) {
    const { plan, most, scope } = await planOf(context, request, 'update')
    // In the trash, a PATCH restores each item (src/resources/trash.ts).
    const restoring = scope[TRASHED] !== undefined
    const body = restoring ? restoringBody(request.body) : validBody(context, request)
    const secrets = restoring ? {} : (await writeOnlyColumns(context, body, 'change')).columns
    const changed = await inTransaction(context, request, reply, async (tx, record) => {
      const rows = await matching(context, request, tx, plan, scope, most, 'change')
      const results = []
      for (const row of rows) {
        try {
          if (restoring) results.push(await restoreLocked(context, request, tx, record, row))
          else results.push(await changeLocked(context, request, tx, record, row, { operation: 'patch', body: () => body, secrets, preconditions: () => {} }))
        } catch (error) {
          throw ofItem(row, error)
        }
      }
      return results
    })
    preferenceApplied(reply, `max-affected=${most}`)
    const selection = context.select((request.query as RawQuery).fields)
    return bodyOf(request, reply, selection !== undefined, changed.map(({ row, standing }) => context.summary(row, standing, selection)))
  }

export const deleteManyHandler = (context: HandlerContext) =>
  async function deleteMany(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    const { plan, most, scope } = await planOf(context, request, 'delete')
    const { collection, store, stored } = context
    // Live items go to the trash; those in it, for good.
    const trashing = collection.options.trash !== undefined && scope[TRASHED] === undefined
    await inTransaction(context, request, reply, async (tx, record) => {
      const rows = await matching(context, request, tx, plan, scope, most, 'delete')
      for (const row of rows) {
        try {
          await collection.options.hooks?.beforeDelete?.({ current: stored(row), parentId: request.params.parentId, caller: request.caller, tx })
          const itemScope = onShelf(context.scopeOf({ ...request.params, id: row.id as string }), scope[TRASHED])
          const removed = trashing ? await store.update(tx, itemScope, { deleted_at: new Date(), updated_at: movedOn(row) }) : await store.remove(tx, itemScope)
          if (removed) record(collection, trashing ? 'trashed' : 'deleted', removed)
        } catch (error) {
          throw ofItem(row, error)
        }
      }
    })
    preferenceApplied(reply, `max-affected=${most}`)
    return reply.code(204).send()
  }

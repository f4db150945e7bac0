/**
 * POST, PUT, PATCH and DELETE, in stages: the request (body, its version's view) -> access (the
 * caller's standing, the fields it may write) -> the change (data, preconditions, the state
 * move) -> one transaction (the item locked, the hooks, the change, the move's guard and effect,
 * the events) -> the representation. A write that needs no hook, no move and no parent is first
 * tried as one statement (src/resources/one-statement.ts); when that writes nothing, the
 * transaction runs and says why.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isAdmin, type Standing } from '../auth/access.js'
import type { Transaction } from '../db/client.js'
import { EVENTS_TABLE, type EventDraft } from '../db/events.js'
import { ApiError } from '../errors.js'
import { evaluate, hasPrecondition } from '../http/conditional.js'
import { requestPath } from '../http/request-target.js'
import { uuidv7 } from '../ids.js'
import type { Collection, EventAction, TransitionContext } from './collection.js'
import { notFound, type Params } from './caller-access.js'
import type { Body, HandlerContext } from './handler-context.js'
import { changeInOneStatement, createInOneStatement, removeInOneStatement } from './one-statement.js'
import { answerOf, checkInTime, validBody, writeOnlyColumns, written, type WriteRequest } from './write-steps.js'
import { checkWritable } from './permissions.js'
import { planChange } from './plan-change.js'
import type { Representation, Row } from './represent.js'
import type { Scope } from './store.js'
import { checkInitial } from './states.js'
import { changes, fullData, toColumns } from './writes.js'

/** Records an event of the write: `row` of `collection` changed so. */
type RecordEvent = (collection: Collection, action: EventAction, row: Row, extra?: Representation) => void

/**
 * The write-only columns of a replace or patch, hashed before its transaction. A body that sets one
 * is checked first (404, 403), unlocked, so that nobody can make the service hash for an item
 * they may not change; the transaction checks again under the lock.
 */
async function secretsOf(context: HandlerContext, request: WriteRequest, params: Params, scope: Scope): Promise<Row> {
  const writeOnly = Object.keys(context.collection.options.writeOnly ?? {})
  const body = request.body as Body | undefined
  if (!writeOnly.some((name) => body?.[name] !== undefined && body[name] !== null)) return {}
  const row = await context.store.find(scope)
  if (!row) throw notFound()
  await context.standing(request, 'update', params, row)
  return (await writeOnlyColumns(context, request, 'change')).columns
}

/**
 * After the item is found and the body is valid (404 and 422 come first): 428 when the collection
 * requires If-Match, then the request's preconditions against the item as it is (412).
 */
function checkPreconditions(context: HandlerContext, request: FastifyRequest, row: Row, standing: Standing): void {
  // `If-Match: *` matches any version: it would say nothing about which one the client read.
  const ifMatch = request.headers['if-match']
  if (context.collection.options.requireIfMatch && (ifMatch === undefined || ifMatch.trim() === '*')) {
    throw new ApiError('PRECONDITION_REQUIRED', `Changes to ${context.collection.name} need If-Match with the ETag you read; GET the item first.`)
  }
  evaluate(request, context.validators(row, standing))
}

/**
 * Runs `change` in one transaction with the events it records, and the parent's when the parent
 * keeps figures of these items and they changed. Everything commits together or nothing does: a
 * change is never without its event, nor an event without its change.
 */
function inTransaction<T>(context: HandlerContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, change: (tx: Transaction, record: RecordEvent) => Promise<T>): Promise<T> {
  const { db, outbox, events, parentStore, collection } = context
  const actor = request.caller?.user.id ?? null
  const parent = collection.options.parent
  return db.transaction(async (tx) => {
    checkInTime(reply)
    const drafts: EventDraft[] = []
    const result = await change(tx, (of, action, row, extra) => drafts.push(outbox.draft(of, action, row, actor, extra)))
    if (drafts.length > 0 && parent?.aggregates) {
      const parentRow = await parentStore!.findChanged(tx, { id: request.params.parentId })
      if (parentRow) drafts.push(outbox.draft(parent.collection, 'updated', parentRow, actor))
    }
    checkInTime(reply)
    events.append(tx, drafts)
    return result
  }, { announce: EVENTS_TABLE })
}

export const createHandler = (context: HandlerContext) =>
  async function create(request: WriteRequest, reply: FastifyReply) {
    const { collection, store, permissions } = context
    const { parent, hooks, states } = collection.options
    context.authorize(request, 'create')
    const answer = answerOf(context, request)
    const recorded = await createInOneStatement(context, request, reply, answer)
    if (recorded) return recorded.answer
    const { scope, standing: standingOf } = await context.placement(request, 'create', request.params)
    const standing = standingOf()
    const body = validBody(context, request)
    checkWritable(permissions[standing], body)
    if (states) checkInitial(states, body)
    const data = fullData(collection, body, permissions[standing].locked)
    const secrets = await writeOnlyColumns(context, request, 'create')
    const row = await inTransaction(context, request, reply, async (tx, record) => {
      // The parent stays until the commit; one deleted since the check above is gone, as for a list.
      if (parent && !(await context.parentStore!.exists({ id: request.params.parentId }, tx, 'keep'))) throw notFound()
      await hooks?.beforeWrite?.({ operation: 'create', data, parentId: request.params.parentId, caller: request.caller, tx })
      const now = new Date()
      const created = await store.insert(tx, { ...toColumns(collection, data), ...secrets.columns, ...scope, id: uuidv7(), created_at: now, updated_at: now })
      if (request.idempotencyKey) await context.keys.recordItem(tx, request.idempotencyKey, created.id as string)
      record(collection, 'created', created)
      return created
    })
    reply.code(201).header('location', `${requestPath(request)}/${row.id as string}`)
    return written(context, request, reply, row, standing, answer, secrets.shown)
  }

/**
 * The answer to a create whose item an earlier attempt with the same Idempotency-Key wrote and
 * never answered (its process ended): the item as it is now, as the create answers.
 */
export const createdBefore = (context: HandlerContext) =>
  async function created(request: WriteRequest, reply: FastifyReply, itemId: string) {
    const row = await context.store.find({ id: itemId })
    if (!row) throw new ApiError('NOT_FOUND', 'The item this request created has been deleted since.')
    const { standing } = await context.placement(request, 'create', request.params)
    reply.code(201).header('location', `${requestPath(request)}/${itemId}`)
    return written(context, request, reply, row, standing(row), answerOf(context, request))
  }

/**
 * Locks the item, checks and merges, and writes only what changed (a write that changes nothing
 * stores nothing and records no event). With the row locked, a precondition holds until the
 * commit: of several requests with the same If-Match, one writes and the others, waiting for the
 * lock, find a new ETag (412).
 */
async function changeInTransaction(context: HandlerContext, request: WriteRequest, reply: FastifyReply, operation: 'replace' | 'patch', scope: Scope) {
  const { collection, store, stored } = context
  const { hooks, states } = collection.options
  const params = request.params
  const secrets = await secretsOf(context, request, params, scope)
  return inTransaction(context, request, reply, async (tx, record) => {
    const row = await store.lock(tx, scope, 'change')
    if (!row) throw notFound()
    const standing = await context.standing(request, 'update', params, row, tx)
    const current = stored(row)
    const { data, move } = planChange(
      collection,
      {
        operation,
        body: validBody(context, request),
        access: context.permissions[standing],
        mover: { owner: context.owns(request, row), admin: isAdmin(request.caller) },
        preconditions: () => checkPreconditions(context, request, row, standing),
      },
      current,
    )
    // The plan's checks come first: the client's copy is checked before a hook decides on the current state (412 before a hook's 409).
    await hooks?.beforeWrite?.({ operation, data, current, parentId: params.parentId, caller: request.caller, tx })
    const changed = { ...toColumns(collection, changes(data, current)), ...secrets }
    if (Object.keys(changed).length === 0) return { row, standing }
    const transition: TransitionContext | undefined = move && {
      tx,
      item: current,
      from: move.from,
      to: move.to,
      caller: request.caller,
      changed: (of, changedRow) => record(of, 'updated', changedRow),
    }
    await move?.transition.guard?.(transition!)
    // updated_at moves forward on every change, even two within one millisecond.
    changed.updated_at = new Date(Math.max(Date.now(), (row.updated_at as Date).getTime() + 1))
    const updated = (await store.update(tx, scope, changed))!
    record(collection, 'updated', updated)
    if (move) record(collection, `${states!.field}_changed`, updated, { from: move.from, to: move.to })
    await move?.transition.effect?.(transition!)
    return { row: updated, standing }
  })
}

/** PUT replaces the content, PATCH merges into it. */
const update = (operation: 'replace' | 'patch') => (context: HandlerContext) =>
  async function change(request: WriteRequest, reply: FastifyReply) {
    context.authorize(request, 'update')
    const answer = answerOf(context, request)
    const scope = context.scopeOf(request.params)
    const { row, standing } =
      (await changeInOneStatement(context, request, reply, operation, scope)) ?? (await changeInTransaction(context, request, reply, operation, scope))
    // Content-Location: the body is the item's current representation (RFC 9110 §8.7; CACHE-14).
    reply.header('content-location', requestPath(request))
    return written(context, request, reply, row, standing, answer)
  }

export const replaceHandler = update('replace')
export const patchHandler = update('patch')

export function deleteHandler(context: HandlerContext) {
  const { store, scopeOf, collection, stored } = context
  const { access, requireIfMatch, hooks } = collection.options
  // A delete that depends on the item (its owner, a hook, a required If-Match) checks it locked
  // first, decided here once; any other only when the request carries a precondition.
  const needsRow = requireIfMatch === true || access.delete === 'owner-or-admin' || hooks?.beforeDelete !== undefined
  return async function remove(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    context.authorize(request, 'delete')
    const scope = scopeOf(request.params)
    if (await removeInOneStatement(context, request, reply, scope)) return reply.code(204).send()
    const checked = needsRow || hasPrecondition(request)
    await inTransaction(context, request, reply, async (tx, record) => {
      if (checked) {
        const row = await store.lock(tx, scope, 'delete')
        if (!row) throw notFound()
        const standing = await context.standing(request, 'delete', request.params, row, tx)
        checkPreconditions(context, request, row, standing)
        await hooks?.beforeDelete?.({ current: stored(row), parentId: request.params.parentId, caller: request.caller, tx })
      }
      const removed = await store.remove(tx, scope)
      if (!removed) throw notFound()
      record(collection, 'deleted', removed)
    })
    return reply.code(204).send()
  }
}

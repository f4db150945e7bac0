/**
 * POST, PUT, PATCH and DELETE, in stages: the request (body, its version's view) -> access (the
 * caller's standing, the fields it may write) -> the change (data, preconditions, the state
 * move) -> one transaction (the item locked, the hooks, the change, the move's guard and effect,
 * the events) -> the representation. A write that needs no hook, no move and no parent is first
 * tried as one statement (src/resources/one-statement.ts); when that writes nothing, the
 * transaction runs and says why.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { hasPrecondition } from '../http/conditional.js'
import { requestPath } from '../http/request-target.js'
import { uuidv7 } from '../ids.js'
import { notFound, type Params } from './caller-access.js'
import type { Body, HandlerContext } from './handler-context.js'
import { changeInOneStatement, createInOneStatement, removeInOneStatement } from './one-statement.js'
import { answerOf, validBody, writeOnlyColumns, written, type WriteRequest } from './write-steps.js'
import { checkWritable } from './permissions.js'
import type { Row } from './represent.js'
import type { Scope } from './store.js'
import { checkInitial } from './states.js'
import { changeLocked, checkPreconditions, inTransaction } from './in-transaction.js'
import { createMany, upsertOf } from './create-many.js'
import { toApiError } from '../http/error-handler.js'
import { withLines } from './import/importer.js'
import { fullData, toColumns } from './writes.js'
import { explainConflict, movedOn, onShelf, restore, shelfOf } from './trash.js'

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
  return request.validationError ? {} : (await writeOnlyColumns(context, validBody(context, request), 'change')).columns
}

export const createHandler = (context: HandlerContext) =>
  async function create(request: WriteRequest, reply: FastifyReply) {
    try {
      return await createOne(context, request, reply)
    } catch (error) {
      throw await explainConflict(context, request, error)
    }
  }

/** POST of one item, or of several (create-many.ts); in one statement when it can be. */
async function createOne(context: HandlerContext, request: WriteRequest, reply: FastifyReply) {
  const { collection, store, permissions } = context
  const { parent, hooks, states } = collection.options
  context.authorize(request, 'create')
  shelfOf(collection, request, 'create')
  const answer = answerOf(context, request)
  const upsert = upsertOf(collection, request)
  if (request.importedLines) {
    // A CSV or NDJSON body (src/resources/import/): its errors name the lines of the items.
    return createMany(context, request, reply, answer, upsert).catch((error: unknown) => {
      throw withLines(toApiError(error, request), request.importedLines)
    })
  }
  if (upsert || Array.isArray(request.body)) return createMany(context, request, reply, answer, upsert)
  const recorded = await createInOneStatement(context, request, reply, answer)
  if (recorded) return recorded.answer
  const { scope, standing: standingOf } = await context.placement(request, 'create', request.params)
  const standing = standingOf()
  const body = validBody(context, request)
  checkWritable(permissions[standing], body)
  if (states) checkInitial(states, body)
  const data = fullData(collection, body, permissions[standing].locked)
  const secrets = await writeOnlyColumns(context, body, 'create')
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
 * Locks the item, then changes it (changeLocked). With the row locked, a precondition holds until
 * the commit: of several requests with the same If-Match, one writes and the others, waiting for
 * the lock, find a new ETag (412).
 */
async function changeInTransaction(context: HandlerContext, request: WriteRequest, reply: FastifyReply, operation: 'replace' | 'patch', scope: Scope) {
  const secrets = await secretsOf(context, request, request.params, scope)
  return inTransaction(context, request, reply, async (tx, record) => {
    const row = await context.store.lock(tx, scope, 'change')
    if (!row) throw notFound()
    const body = () => validBody(context, request)
    return changeLocked(context, request, tx, record, row, { operation, body, secrets, preconditions: (standing) => checkPreconditions(context, request, row, standing) })
  })
}

/** The change a PUT or PATCH makes: in one statement when it can, else in a transaction; a PATCH in the trash restores. */
async function changed(context: HandlerContext, request: WriteRequest, reply: FastifyReply, operation: 'replace' | 'patch') {
  if (shelfOf(context.collection, request, operation === 'patch' ? 'update' : 'replace')) return restore(context, request, reply)
  const scope = context.scopeOf(request.params)
  try {
    return (await changeInOneStatement(context, request, reply, operation, scope)) ?? (await changeInTransaction(context, request, reply, operation, scope))
  } catch (error) {
    throw await explainConflict(context, request, error)
  }
}

/** PUT replaces the content, PATCH merges into it. */
const update = (operation: 'replace' | 'patch') => (context: HandlerContext) =>
  async function change(request: WriteRequest, reply: FastifyReply) {
    context.authorize(request, 'update')
    const answer = answerOf(context, request)
    const { row, standing } = await changed(context, request, reply, operation)
    // Content-Location: the body is the item's current representation (RFC 9110 §8.7; CACHE-14).
    reply.header('content-location', requestPath(request))
    return written(context, request, reply, row, standing, answer)
  }

export const replaceHandler = update('replace')
export const patchHandler = update('patch')

/**
 * DELETE: the item gone, or in a collection with a trash, moved there (`trashed`); a DELETE in
 * the trash (`trashed=only`) deletes it for good.
 */
export function deleteHandler(context: HandlerContext) {
  const { store, scopeOf, collection, stored } = context
  const { access, requireIfMatch, hooks, trash } = collection.options
  // A delete that depends on the item (its owner, a hook, a required If-Match) checks it locked
  // first, decided here once; any other only when the request carries a precondition.
  const needsRow = requireIfMatch === true || access.delete === 'owner-or-admin' || hooks?.beforeDelete !== undefined
  return async function remove(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    context.authorize(request, 'delete')
    const shelf = shelfOf(collection, request, 'delete')
    const scope = onShelf(scopeOf(request.params), shelf)
    const trashing = trash !== undefined && shelf === undefined
    if (await removeInOneStatement(context, request, reply, scope, trashing)) return reply.code(204).send()
    // Moving to the trash sets updated_at from the row's.
    const checked = needsRow || trashing || hasPrecondition(request)
    await inTransaction(context, request, reply, async (tx, record) => {
      const row = checked ? await store.lock(tx, scope, 'delete') : undefined
      if (row === null) throw notFound()
      if (row) {
        const standing = await context.standing(request, 'delete', request.params, row, tx)
        checkPreconditions(context, request, row, standing)
        await hooks?.beforeDelete?.({ current: stored(row), parentId: request.params.parentId, caller: request.caller, tx })
      }
      const removed = trashing ? await store.update(tx, scope, { deleted_at: new Date(), updated_at: movedOn(row!) }) : await store.remove(tx, scope)
      if (!removed) throw notFound()
      record(collection, trashing ? 'trashed' : 'deleted', removed)
    })
    return reply.code(204).send()
  }
}

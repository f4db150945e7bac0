/**
 * Writes in one statement: the change and its event, committed on their own, one round trip
 * (docs/performance.md, "Writes at the floor"). A write qualifies when nothing about it needs the
 * transaction: no hook, no state move, no parent to check or to update, no write-only field to
 * hash. What the checks would need the row for becomes a condition of the statement: the caller
 * owns the item, If-Match names its version, the body changes something. Everything else is
 * checked before, as the transaction would. When the statement writes nothing (no such item, a
 * condition failed, or nothing to change), these return undefined and the handler runs the
 * transaction, which locks the row and answers why in the order of checks: a one-statement write
 * only ever answers what the transaction would have answered had it run at the same moment.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isAdmin, standingOf, type Standing } from '../auth/access.js'
import { ifMatchVersions } from '../http/conditional.js'
import { requestPath } from '../http/request-target.js'
import { uuidv7 } from '../ids.js'
import { eventCollection, type Collection, type EventAction } from './collection.js'
import type { Params } from './caller-access.js'
import type { HandlerContext } from './handler-context.js'
import type { Row } from './represent.js'
import type { EventOf, Guards, Scope } from './store.js'
import { checkInTime, validBody, writeOnlyColumns, written, type Answer, type WriteRequest, type Written } from './write-steps.js'
import { toColumns, writeData } from './writes.js'

/** Whether an action on this collection can be one statement at all, by what it declares. */
function allowed(collection: Collection, action: 'create' | 'update' | 'delete'): boolean {
  const { hooks, parent } = collection.options
  // A parent is checked (it exists, whose it is) or keeps figures of its items (its own event).
  if (parent) return false
  return action === 'delete' ? !hooks?.beforeDelete : !hooks?.beforeWrite
}

const eventOf = (collection: Collection, action: EventAction, request: FastifyRequest): EventOf => {
  const name = eventCollection(collection)
  return { type: `${name}.${action}`, collection: name, actorId: request.caller?.user.id ?? null, deadline: request.deadline }
}

/**
 * The caller's standing towards an item it has not read, and the condition that makes it so: an
 * admin is an admin; anyone else is taken for the owner of an item with an owner, on condition
 * that the row says so (anyone else gets the transaction's answer). Undefined without a caller.
 */
function standingFor(context: HandlerContext, request: FastifyRequest): { standing: Standing; guards: Guards } | undefined {
  const { caller } = request
  const { ownership } = context.collection
  if (ownership.kind === 'none' || isAdmin(caller)) return { standing: standingOf(caller), guards: {} }
  if (ownership.kind === 'own' && caller) return { standing: 'owner', guards: { owner: [ownership.column, caller.user.id] } }
  return undefined
}

/** The guards of a request's preconditions, when they can be conditions of the statement; undefined when the row must be read. */
function withPreconditions(context: HandlerContext, request: FastifyRequest, standing: Standing, guards: Guards): Guards | undefined {
  const versions = ifMatchVersions(request, context.version.version, context.permissions[standing].variant)
  if (versions === null || (versions === undefined && context.collection.options.requireIfMatch)) return undefined
  return versions ? { ...guards, versions } : guards
}

/** POST without a hook or a parent: the item and its event, and the answer; undefined when the statement cannot make it. */
export async function createInOneStatement(context: HandlerContext, request: WriteRequest, reply: FastifyReply, answer: Answer): Promise<{ answer: Written } | undefined> {
  const { collection, permissions } = context
  if (!allowed(collection, 'create') || request.validationError) return undefined
  const { scope, standing: standingOf } = await context.placement(request, 'create', request.params)
  const standing = standingOf()
  const body = validBody(context, request)
  const states = collection.options.states
  // A field this caller may not write, or a state other than the first: the transaction says which.
  if ([...permissions[standing].locked.keys()].some((name) => name in body)) return undefined
  if (states && body[states.field] !== undefined && body[states.field] !== null && body[states.field] !== states.initial) return undefined
  const data = writeData(collection, 'replace', body, permissions[standing].locked)
  const secrets = await writeOnlyColumns(context, body, 'create')
  const now = new Date()
  checkInTime(reply)
  const row = await context.store.createRecorded(
    { ...toColumns(collection, data), ...secrets.columns, ...scope, id: uuidv7(), created_at: now, updated_at: now },
    eventOf(collection, 'created', request),
    request.idempotencyKey,
  )
  reply.code(201).header('location', `${requestPath(request)}/${row.id as string}`)
  return { answer: written(context, request, reply, row, standing, answer, secrets.shown) }
}

/** PUT and PATCH without a hook, a move, a parent or a write-only field: the change, if it changes something, and its event. */
export async function changeInOneStatement(
  context: HandlerContext,
  request: WriteRequest,
  reply: FastifyReply,
  operation: 'replace' | 'patch',
  scope: Scope,
): Promise<{ row: Row; standing: Standing } | undefined> {
  const { collection, permissions } = context
  if (!allowed(collection, 'update') || request.validationError) return undefined
  const body = validBody(context, request)
  const states = collection.options.states
  // A move has a guard and an effect; a replace keeps the state it leaves out, and may echo the
  // item's identity, which must equal the row's: these need the row.
  if (states && (operation === 'replace' || body[states.field] !== undefined)) return undefined
  if (operation === 'replace' && collection.identity.some((name) => name in body)) return undefined
  if (collection.writeOnly.some((name) => body[name] !== undefined && body[name] !== null)) return undefined
  const access = standingFor(context, request)
  if (!access) return undefined
  const { standing } = access
  if ([...permissions[standing].locked.keys()].some((name) => name in body)) return undefined
  const guards = withPreconditions(context, request, standing, access.guards)
  if (!guards) return undefined
  const data = toColumns(collection, writeData(collection, operation, body, permissions[standing].locked))
  if (Object.keys(data).length === 0) return undefined
  checkInTime(reply)
  const row = await context.store.changeRecorded(scope, guards, data, new Date(), eventOf(collection, 'updated', request))
  return row ? { row, standing } : undefined
}

/**
 * DELETE without a hook or a parent: the item gone and its event, or `trashing`, moved to the
 * trash (src/resources/trash.ts) with its event; false when nothing was deleted.
 */
export async function removeInOneStatement(context: HandlerContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, scope: Scope, trashing: boolean): Promise<boolean> {
  const { collection, store } = context
  if (!allowed(collection, 'delete')) return false
  const access = standingFor(context, request)
  if (!access) return false
  const guards = withPreconditions(context, request, access.standing, access.guards)
  if (!guards) return false
  checkInTime(reply)
  const now = new Date()
  const done = trashing
    ? await store.changeRecorded(scope, guards, { deleted_at: now }, now, eventOf(collection, 'trashed', request))
    : await store.removeRecorded(scope, guards, eventOf(collection, 'deleted', request))
  return done !== null
}

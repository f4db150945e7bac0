/**
 * The steps of a write inside its transaction, shared by the one-item handlers
 * (write-handlers.ts) and the many-item ones (create-many.ts): the transaction with its events,
 * the preconditions against a locked row, and the change of a locked row.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { isAdmin, type Standing } from '../auth/access.js'
import type { Transaction } from '../db/client.js'
import { EVENTS_TABLE, type EventDraft } from '../db/events.js'
import { ApiError } from '../errors.js'
import { evaluate } from '../http/conditional.js'
import type { Collection, EventAction, TransitionContext } from './collection.js'
import type { Params } from './caller-access.js'
import type { Body, HandlerContext } from './handler-context.js'
import { planChange } from './plan-change.js'
import type { Representation, Row } from './represent.js'
import type { Scope } from './store.js'
import { checkInTime } from './write-steps.js'
import { changes, toColumns } from './writes.js'

/** Records an event of the write: `row` of `collection` changed so. */
export type RecordEvent = (collection: Collection, action: EventAction, row: Row, extra?: Representation) => void

/**
 * After the item is found and the body is valid (404 and 422 come first): 428 when the collection
 * requires If-Match, then the request's preconditions against the item as it is (412).
 */
export function checkPreconditions(context: HandlerContext, request: FastifyRequest, row: Row, standing: Standing): void {
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
export function inTransaction<T>(context: HandlerContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply, change: (tx: Transaction, record: RecordEvent) => Promise<T>): Promise<T> {
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

/** A change of a row locked in `tx`: what it asks, and what its request holds. */
export interface LockedChange {
  operation: 'replace' | 'patch'
  /** The valid body, as the collection takes it: read after the caller's standing (403 before 422). */
  body(): Body
  /** The stored values of the write-only fields it sets (writeOnlyColumns), hashed before the lock. */
  secrets: Row
  /** The request's preconditions against the row (checkPreconditions, or none for an upsert). */
  preconditions(standing: Standing): void
}

/**
 * Checks and merges a change into the locked `row`, and writes only what changed (a write that
 * changes nothing stores nothing and records no event): the plan's checks, the hook, the move's
 * guard, the write, its events, the move's effect. The row as it is after, and the caller's standing.
 */
export async function changeLocked(
  context: HandlerContext,
  request: FastifyRequest<{ Params: Params }>,
  tx: Transaction,
  record: RecordEvent,
  row: Row,
  { operation, body, secrets, preconditions }: LockedChange,
): Promise<{ row: Row; standing: Standing; changed: boolean }> {
  const { collection, store, stored } = context
  const { hooks, states } = collection.options
  const params = request.params
  const scope: Scope = context.scopeOf({ ...params, id: row.id as string })
  const standing = await context.standing(request, 'update', params, row, tx)
  const current = stored(row)
  const { data, move } = planChange(
    collection,
    {
      operation,
      body: body(),
      access: context.permissions[standing],
      mover: { owner: context.owns(request, row), admin: isAdmin(request.caller) },
      preconditions: () => preconditions(standing),
    },
    current,
  )
  // The plan's checks come first: the client's copy is checked before a hook decides on the current state (412 before a hook's 409).
  await hooks?.beforeWrite?.({ operation, data, current, parentId: params.parentId, caller: request.caller, tx })
  const changed = { ...toColumns(collection, changes(data, current)), ...secrets }
  if (Object.keys(changed).length === 0) return { row, standing, changed: false }
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
  return { row: updated, standing, changed: true }
}

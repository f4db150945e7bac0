/**
 * The trash (DESIGN "Data over time"), for a collection that declares `trash: { days }`: DELETE
 * moves a live item there (`trashed`), reads and lists lose it and its children; admins reach it
 * with `trashed=only|include`; `PATCH ?trashed=only {"deleted_at": null}` restores it
 * (`restored`); `DELETE ?trashed=only`, or housekeeping after the days, deletes it for good
 * (`deleted`). The item keeps its unique values meanwhile: a 409 for one says where it is.
 *
 * Where a statement reaches is its scope's shelf (src/resources/shelf.ts): the store adds the
 * condition on `deleted_at`, so every read, list, lock and write of the collection, and every
 * relation that embeds or filters through it, sees live items unless a request says otherwise.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { isAdmin, type Standing } from '../auth/access.js'
import type { Database, Transaction } from '../db/client.js'
import { ApiError, unauthenticated } from '../errors.js'
import { every, PRUNE_EVERY_MS } from '../http/housekeeping.js'
import { notFound, type Action, type Params } from './caller-access.js'
import { eventCollection, type Collection } from './collection.js'
import { storeOf, type HandlerContext } from './handler-context.js'
import { checkPreconditions, inTransaction, type RecordEvent } from './in-transaction.js'
import type { Row } from './represent.js'
import { TRASHED, type Scope, type Shelf } from './shelf.js'
import type { Store } from './store.js'

/** The shelves `trashed=` may name, by action: restoring and deleting for good reach the trash alone. */
const SHELVES: Partial<Record<Action | 'replace', readonly Shelf[]>> = { list: ['only', 'include'], read: ['only', 'include'], update: ['only'], delete: ['only'] }

const invalid = (reason: string) => new ApiError('INVALID_PARAMETER', 'Invalid query parameter: trashed.', [{ field: 'trashed', reason }])

/**
 * The shelf a request names (`trashed=`), checked for its action once the action's own rule
 * allows the caller: undefined for the live items. Only admins see the trash.
 */
export function shelfOf(collection: Collection, request: FastifyRequest, action: Action | 'replace'): Shelf | undefined {
  const raw = (request.query as Record<string, unknown> | undefined)?.trashed
  if (raw === undefined) return undefined
  if (!collection.options.trash) throw invalid(`${collection.name} keep no trash: a deleted item is gone`)
  const shelves = SHELVES[action] ?? []
  if (shelves.length === 0) {
    throw invalid(action === 'replace' ? 'is not taken by PUT: an item in the trash is restored with PATCH ?trashed=only and {"deleted_at": null}' : 'is taken by reads, lists, PATCH and DELETE only')
  }
  if (typeof raw !== 'string' || !shelves.includes(raw as Shelf)) throw invalid(`must be ${shelves.join(' or ')}`)
  if (!request.caller) throw unauthenticated('Sign in as an admin to see the trash.')
  if (!isAdmin(request.caller)) throw new ApiError('FORBIDDEN', 'Only admins see the trash.')
  return raw as Shelf
}

/** `scope` on `shelf`: the live items when there is none. */
export const onShelf = (scope: Scope, shelf: Shelf | undefined): Scope => (shelf ? { ...scope, [TRASHED]: shelf } : scope)

/** What a change of a locked row sets beside its data: updated_at moves forward, even within one millisecond. */
export const movedOn = (row: Row): Date => new Date(Math.max(Date.now(), (row.updated_at as Date).getTime() + 1))

/**
 * A restore: `PATCH ?trashed=only` with the body `{"deleted_at": null}`, nothing else; the
 * item's preconditions hold as for any change. The item as it is now, and the caller's standing.
 */
export function restore(context: HandlerContext, request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
  const scope = onShelf(context.scopeOf(request.params), 'only')
  return inTransaction(context, request, reply, async (tx, record) => {
    const row = await context.store.lock(tx, scope, 'change')
    if (!row) throw notFound()
    return restoreLocked(context, request, tx, record, row, (standing) => {
      restoringBody(request.body)
      checkPreconditions(context, request, row, standing)
    })
  })
}

/** Restores `row` of the trash, locked in `tx`, once the caller may change it and `checks` pass. */
export async function restoreLocked(
  context: HandlerContext,
  request: FastifyRequest<{ Params: Params }>,
  tx: Transaction,
  record: RecordEvent,
  row: Row,
  checks?: (standing: Standing) => void,
): Promise<{ row: Row; standing: Standing }> {
  const standing = await context.standing(request, 'update', request.params, row, tx)
  checks?.(standing)
  const scope = onShelf(context.scopeOf({ ...request.params, id: row.id as string }), 'only')
  const restored = (await context.store.update(tx, scope, { deleted_at: null, updated_at: movedOn(row) }))!
  record(context.collection, 'restored', restored)
  return { row: restored, standing }
}

/** The one change an item in the trash takes: out of it. The body, once it says only that. */
export function restoringBody(body: unknown): Record<string, unknown> {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.entries(body) : undefined
  if (fields && fields.length === 1 && fields[0]![0] === 'deleted_at' && fields[0]![1] === null) return body as Record<string, unknown>
  const others = (fields ?? []).filter(([name]) => name !== 'deleted_at').map(([name]) => ({ field: name, reason: 'cannot change while the item is in the trash; restore it first' }))
  const details = others.length > 0 ? others : [{ field: 'deleted_at', reason: 'must be null: the body {"deleted_at": null} restores the item' }]
  throw new ApiError('VALIDATION_ERROR', 'An item in the trash changes only by being restored: PATCH it with {"deleted_at": null}.', details)
}

/** `[3].sku` → item 3's `sku`; `sku` → the body's. */
const TAKEN_FIELD = /^(?:\[(\d+)\]\.)?([a-z][a-z0-9_]*)$/

/**
 * A 409 for a unique value that an item in the trash holds says so, and an admin how to free it;
 * any other error as it is. It reads after the request's transaction, which the conflict ended.
 */
export async function explainConflict(context: HandlerContext, request: FastifyRequest, error: unknown): Promise<unknown> {
  const { collection, store } = context
  const unique: readonly string[] = collection.options.unique ?? []
  if (!collection.options.trash || !(error instanceof ApiError) || error.code !== 'CONFLICT' || unique.length === 0) return error
  const body = request.body as Record<string, unknown> | Record<string, unknown>[] | undefined
  for (const [i, detail] of error.details.entries()) {
    const match = TAKEN_FIELD.exec(detail.field)
    if (!match || !unique.includes(match[2]!)) continue
    const item = match[1] === undefined ? body : (body as Record<string, unknown>[] | undefined)?.[Number(match[1])]
    const value = (item as Record<string, unknown> | undefined)?.[match[2]!]
    if (value === undefined || value === null) continue
    // In a batch the conflict ended the batch's transaction, which every statement joins: then
    // the lookup fails, and the conflict is told as it is.
    const holder = await store.trashedHolder(match[2]!, value).catch(() => undefined)
    if (holder === undefined) continue
    const at = `/api/v${context.version.version}/${collection.name}/${holder}`
    const free = isAdmin(request.caller) ? `: restore it (PATCH ${at}?trashed=only with {"deleted_at": null}) or delete it for good (DELETE ${at}?trashed=only)` : ''
    const prefix = match[1] === undefined ? '' : `[${match[1]}]: `
    const details = error.details.map((d, j) => (j === i ? { field: d.field, reason: 'is held by an item in the trash' } : d))
    return new ApiError('CONFLICT', `${prefix}The ${match[2]} ${JSON.stringify(value)} belongs to an item in the trash${free}.`, details, { cause: error })
  }
  return error
}

/** Items deleted for good by one statement of housekeeping: a bounded transaction. */
const PURGE_BATCH = 500
/** Statements one round of housekeeping makes per collection at most; the next round goes on. */
const PURGE_ROUNDS = 20

/**
 * Deletes for good the items longer than their collection's days in its trash, each with its
 * `deleted` event: how many. Any instance may run it at any time: an item another purge or
 * request holds is skipped, and purged at the next round.
 */
export async function purgeExpiredTrash(stores: ReadonlyMap<Collection, Store>): Promise<number> {
  let purged = 0
  for (const [collection, store] of stores) {
    const name = eventCollection(collection)
    for (let round = 0; round < PURGE_ROUNDS; round++) {
      // No request waits: the statement's own time limit bounds it.
      const event = { type: `${name}.deleted`, collection: name, actorId: null, deadline: Date.now() + PRUNE_EVERY_MS }
      const n = await store.purgeTrash(collection.options.trash!.days, PURGE_BATCH, event)
      purged += n
      if (n < PURGE_BATCH) break
    }
  }
  return purged
}

/** The stores of the collections that keep a trash, for purgeExpiredTrash. */
export const trashStores = (db: Database, collections: readonly Collection[]): ReadonlyMap<Collection, Store> =>
  // A purge counts nothing: the store's count limit is never used.
  new Map(collections.filter((collection) => collection.options.trash).map((collection) => [collection, storeOf(db, collection, 0)]))

/** Runs purgeExpiredTrash every PRUNE_EVERY_MS on this instance, for the collections that keep a trash. */
export function installTrashHousekeeping(app: FastifyInstance, db: Database, collections: readonly Collection[]): void {
  const stores = trashStores(db, collections)
  if (stores.size > 0) every(app, PRUNE_EVERY_MS, 'purge the trash', () => purgeExpiredTrash(stores))
}

/** What a collection's handlers share: its store, its representations, and who may do what to which item. */
import type { FastifyRequest } from 'fastify'
import { authorize, authorizeItem, isAdmin, STANDINGS, standingOf, type CollectionAccess, type Standing } from '../auth/access.js'
import type { Database, Statements } from '../db/client.js'
import type { EventDraft, EventLog } from '../db/events.js'
import type { IdempotencyKeys } from '../db/idempotency.js'
import { ApiError } from '../errors.js'
import { itemTag, type Validators } from '../http/conditional.js'
import { isUuid } from '../ids.js'
import type { Collection, EventAction } from './collection.js'
import { resolvePermissions, type Permissions } from './permissions.js'
import { representer, type Representation, type Row } from './represent.js'
import { createStore, type Scope, type Store } from './store.js'
import { collectionVersion, type CollectionVersion } from './versions.js'

export type Params = { id?: string; parentId?: string }
export type Body = Record<string, unknown>
export type Action = keyof CollectionAccess

/** Makes the events of changes (src/events/outbox.ts). */
export interface EventDrafter {
  /** The draft of one event about `row` of `collection`; `extra` joins the data (a transition's from and to). */
  draft(collection: Collection, action: EventAction, row: Row, actorId: string | null, extra?: Representation): EventDraft
}

/** What every collection's handlers share: where events go, the Idempotency-Keys, and how far lists count. */
export interface CollectionServices {
  outbox: EventDrafter
  events: EventLog
  keys: IdempotencyKeys
  /** A list counts matching rows up to this many (COUNT_LIMIT). */
  countLimit: number
}

export interface HandlerContext extends CollectionServices {
  collection: Collection
  db: Database
  store: Store
  /** The parent's store, in a nested collection. */
  parentStore: Store | undefined
  /** The API version these handlers serve, with its view of the collection. */
  version: CollectionVersion
  permissions: Permissions
  /** The item with every field, as hooks and write checks see it. */
  stored(row: Row): Representation
  /** The list representation as this version shows it to this standing. */
  summary(row: Row, standing: Standing): Representation
  /** The detail representation as this version shows it to this standing. */
  detail(row: Row, standing: Standing): Representation
  /** The validators of an item as this version shows it to this standing. */
  validators(row: Row, standing: Standing): Validators
  /** The item's scope: its id and, when nested, its parent. Malformed ids are answered like unknown ones. */
  scopeOf(params: Params): Scope
  /** The collection-level rule of an action, before any item is looked at: 401, or 403 for a role. */
  authorize(request: FastifyRequest, action: Action): void
  /**
   * The caller's standing towards a found item, once the action's owner rule allows it (else
   * 403); `on` is the write's transaction, when there is one.
   */
  standing(request: FastifyRequest, action: Action, params: Params, row: Row, on?: Statements): Promise<Standing>
  /** Whether the caller owns the item (an admin may too). */
  owns(request: FastifyRequest, row: Row): boolean
  /**
   * Where a list reads or a create writes: the parent (404 when unknown, 403 when it is another
   * owner's), the caller's own items only when the rule says so, and the caller's standing.
   */
  placement(request: FastifyRequest, action: 'list' | 'create', params: Params): Promise<{ scope: Scope; standing(row?: Row): Standing }>
}

export const notFound = () => new ApiError('NOT_FOUND')

/**
 * Body validation is attached, not thrown, so that an unknown item or parent is a 404 before
 * an invalid body is a 422 (the order of checks in DESIGN.md).
 */
export function rejectInvalid(request: FastifyRequest): void {
  if (request.validationError) throw request.validationError
}

const storeOf = (db: Database, collection: Collection, countLimit: number) =>
  createStore(db, {
    table: collection.options.table ?? collection.name,
    columns: collection.columns,
    listColumns: collection.listColumns,
    countLimit,
  })

const VERBS: Readonly<Record<Action, string>> = { list: 'list', read: 'read', create: 'create', update: 'change', delete: 'delete' }

/** Built once per collection and API version at startup. */
export function handlerContext(collection: Collection, db: Database, versionNumber: number, services: CollectionServices): HandlerContext {
  const { parent, computed, access } = collection.options
  const { ownership } = collection
  const parentStore = parent && storeOf(db, parent.collection, services.countLimit)
  const parentColumn = parent?.field
  const version = collectionVersion(collection, versionNumber)
  const permissions = resolvePermissions(collection)
  const views = Object.fromEntries(
    STANDINGS.map((standing) => {
      const visible = collection.fields.filter((f) => !permissions[standing].hidden.has(f.name))
      const summaryFields = collection.summaryFields.filter((f) => !permissions[standing].hidden.has(f.name))
      return [standing, { summary: representer(summaryFields, computed), detail: representer(visible, computed) }]
    }),
  ) as Record<Standing, { summary(row: Row): Representation; detail(row: Row): Representation }>

  /** The parent item, for a collection its parent's owner owns; 404 when there is none. */
  async function parentRow(parentId: string | undefined, on?: Statements): Promise<Row> {
    const row = isUuid(parentId!) ? await parentStore!.find({ id: parentId }, on) : null
    if (!row) throw notFound()
    return row
  }

  return {
    ...services,
    collection,
    db,
    store: storeOf(db, collection, services.countLimit),
    parentStore,
    version,
    permissions,
    // Every field, whoever may read it: a rule may hide a field even from admins.
    stored: representer(collection.fields, computed),
    summary: (row, standing) => version.toView(views[standing].summary(row)),
    detail: (row, standing) => version.toView(views[standing].detail(row)),
    validators: (row, standing) => ({
      etag: itemTag(versionNumber, row.updated_at as Date, permissions[standing].variant),
      lastModified: row.updated_at as Date,
    }),
    scopeOf(params) {
      if (!isUuid(params.id!) || (parent && !isUuid(params.parentId!))) throw notFound()
      return parentColumn ? { id: params.id, [parentColumn]: params.parentId } : { id: params.id }
    },
    authorize: (request, action) => authorize(access[action], request.caller, VERBS[action]),
    async standing(request, action, params, row, on) {
      const owner =
        ownership.kind === 'own' ? row[ownership.column] : ownership.kind === 'parent' ? (await parentRow(params.parentId, on))[ownership.column] : undefined
      const standing = standingOf(request.caller, owner)
      authorizeItem(access[action], standing, VERBS[action])
      return standing
    },
    owns: (request, row) => ownership.kind === 'own' && request.caller !== null && row[ownership.column] === request.caller.user.id,
    async placement(request, action, params) {
      const { caller } = request
      const scope: Scope = {}
      let fixed: Standing | undefined
      if (parentStore && parentColumn) {
        if (ownership.kind === 'parent') {
          fixed = standingOf(caller, (await parentRow(params.parentId))[ownership.column])
          authorizeItem(access[action], fixed, `${VERBS[action]} the ${collection.name} of`)
        } else if (!isUuid(params.parentId!) || !(await parentStore.exists({ id: params.parentId }))) {
          throw notFound()
        }
        scope[parentColumn] = params.parentId
      }
      if (ownership.kind !== 'own') return { scope, standing: () => fixed ?? standingOf(caller) }
      if (action === 'list') {
        // Owner-scoped lists: a caller lists only their own items, an admin everybody's.
        if (access.list === 'owner-or-admin' && !isAdmin(caller)) scope[ownership.column] = caller!.user.id
        return { scope, standing: (row) => standingOf(caller, row![ownership.column]) }
      }
      // A new item belongs to its creator, who sees it as its owner; an item that is its own
      // owner (a user) is seen so by whoever registers it.
      if (caller && ownership.column !== 'id') scope[ownership.column] = caller.user.id
      const standing: Standing = isAdmin(caller) ? 'admin' : 'owner'
      return { scope, standing: () => standing }
    },
  }
}

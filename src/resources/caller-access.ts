/** Who may do what to which item of a collection: the caller's standing, its scope, and where it may list or create. */
import type { FastifyRequest } from 'fastify'
import { authorize, authorizeItem, isAdmin, standingOf, type CollectionAccess, type Standing } from '../auth/access.js'
import type { Statements } from '../db/client.js'
import { ApiError } from '../errors.js'
import { isUuid } from '../ids.js'
import type { Collection } from './collection.js'
import type { Row } from './represent.js'
import type { Scope, Store } from './store.js'

export type Params = { id?: string; parentId?: string }
export type Action = keyof CollectionAccess

export interface CallerAccess {
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

const VERBS: Readonly<Record<Action, string>> = { list: 'list', read: 'read', create: 'create', update: 'change', delete: 'delete' }

/** Built once per collection at startup; `parentStore` reads the parent of a nested collection. */
export function callerAccess(collection: Collection, parentStore: Store | undefined): CallerAccess {
  const { parent, access } = collection.options
  const { ownership } = collection
  const parentColumn = parent?.field

  /** The parent item, for a collection its parent's owner owns; 404 when there is none. */
  async function parentRow(parentId: string | undefined, on?: Statements): Promise<Row> {
    const row = isUuid(parentId!) ? await parentStore!.find({ id: parentId }, on) : null
    if (!row) throw notFound()
    return row
  }

  return {
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

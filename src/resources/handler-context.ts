/** What a collection's handlers share: its store, its representations, and the scope of a request. */
import type { FastifyRequest } from 'fastify'
import type { Database } from '../db/client.js'
import { ApiError } from '../errors.js'
import { itemTag, type Validators } from '../http/conditional.js'
import type { Collection } from './collection.js'
import { isUuid } from './ids.js'
import { representer, type Representation, type Row } from './represent.js'
import { createStore, type Scope, type Store } from './store.js'
import { collectionVersion, type CollectionVersion } from './versions.js'

export type Params = { id?: string; parentId?: string }
export type Body = Record<string, unknown>

export interface HandlerContext {
  collection: Collection
  store: Store
  /** The API version these handlers serve, with its view of the collection. */
  version: CollectionVersion
  summary(row: Row): Representation
  detail(row: Row): Representation
  /** The validators of an item as this version shows it. */
  validators(row: Row): Validators
  /** The item's scope: its id and, when nested, its parent. Malformed ids are answered like unknown ones. */
  scopeOf(params: Params): Scope
  /** The list's scope; a nested list under an unknown parent is a 404, not an empty list. */
  listScope(params: Params): Promise<Scope>
}

export const notFound = () => new ApiError('NOT_FOUND')

/**
 * Body validation is attached, not thrown, so that an unknown item or parent is a 404 before
 * an invalid body is a 422 (the order of checks in DESIGN.md).
 */
export function rejectInvalid(request: FastifyRequest): void {
  if (request.validationError) throw request.validationError
}

const storeOf = (db: Database, collection: Collection) =>
  createStore(db, {
    model: collection.options.model,
    table: collection.options.table ?? collection.name,
    columns: collection.columns,
    listColumns: collection.listColumns,
    fieldNames: collection.fields.filter((f) => !f.computed).map((f) => f.name),
  })

/** Built once per collection and API version at startup. */
export function handlerContext(collection: Collection, db: Database, versionNumber: number): HandlerContext {
  const { parent, computed } = collection.options
  const parentStore = parent && storeOf(db, parent.collection)
  const parentColumn = parent && collection.field.get(parent.field)!.column
  const version = collectionVersion(collection, versionNumber)
  return {
    collection,
    store: storeOf(db, collection),
    version,
    summary: representer(collection.summaryFields, computed),
    detail: representer(collection.fields, computed),
    validators: (row) => ({ etag: itemTag(versionNumber, row.updatedAt as Date), lastModified: row.updatedAt as Date }),
    scopeOf(params) {
      if (!isUuid(params.id!) || (parent && !isUuid(params.parentId!))) throw notFound()
      return parentColumn ? { id: params.id, [parentColumn]: params.parentId } : { id: params.id }
    },
    async listScope(params) {
      if (!parentStore || !parentColumn) return {}
      if (!isUuid(params.parentId!) || !(await parentStore.exists({ id: params.parentId }))) throw notFound()
      return { [parentColumn]: params.parentId }
    },
  }
}

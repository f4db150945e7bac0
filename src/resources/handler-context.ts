/** What a collection's handlers share: its store, its representations, and who may do what to which item. */
import type { FastifyRequest } from 'fastify'
import type { Database } from '../db/client.js'
import type { EventDraft, EventLog } from '../db/events.js'
import type { ReadYourWrites } from '../http/read-your-writes.js'
import type { IdempotencyKeys } from '../db/idempotency.js'
import { callerAccess, type CallerAccess } from './caller-access.js'
import { eventCollection, type Collection, type EventAction } from './collection.js'
import { fieldSelector, type FieldSelector } from './field-selection.js'
import type { Caller } from '../auth/caller.js'
import { includer, readableBy, type IncludePlan } from './include.js'
import type { AddValue, ListSpec, RelatedSpec } from './list-query/plan.js'
import { quote } from './list-query/to-sql.js'
import { restrictedReads } from './permissions.js'
import { representationOf, type CollectionVersions } from './revalidation.js'
import type { Relation } from './relations.js'
import type { Representation, Row } from './represent.js'
import type { ExportLimits } from './export/handler.js'
import { createStore, type Store } from './store.js'
import { collectionViews, type Views } from './views.js'

export type Body = Record<string, unknown>

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
  /** One request creates or changes at most this many items (BULK_MAX_ITEMS). */
  bulkMaxItems: number
  /** How many rows an export may have and reads at once (EXPORT_MAX_ROWS, EXPORT_PAGE_ROWS). */
  exports: ExportLimits
  /** Every collection's relations (src/resources/relations.ts). */
  relations: ReadonlyMap<Collection, ReadonlyMap<string, Relation>>
  /** The collections' versions from the event tail (src/events/versions.ts). */
  versions: CollectionVersions
  /** Where a caller's reads run after their writes (src/http/read-your-writes.ts). */
  readYourWrites: ReadYourWrites
}

/**
 * What a collection's handlers share, built once per collection and API version at startup: the
 * caller's access (src/resources/caller-access.ts), the views (src/resources/views.ts), the
 * stores and the services.
 */
export interface HandlerContext extends CollectionServices, CallerAccess, Views {
  collection: Collection
  db: Database
  store: Store
  /** The parent's store, in a nested collection. */
  parentStore: Store | undefined
  /** The fields a request asks for (`fields=`), parsed. */
  select: FieldSelector
  /** The related items a request embeds (`include=`), parsed; undefined without `include`. */
  include(query: Record<string, unknown>): IncludePlan | undefined
  /** What a list may sort and filter by, its relations' fields too (`filter=author.name = "Ada"`). */
  listSpec: ListSpec
  /**
   * The event collections a list's page may show: its own, and those its relations reach in the
   * two steps `include` may take (what it embeds or filters through, and a referenced item whose
   * deletion empties a column); undefined when one of them changes without events.
   */
  shows: readonly string[] | undefined
  /** What the collection's pages are made from besides the data (src/resources/revalidation.ts). */
  representation: string
}

/** HandlerContext.shows: the collection and those its relations reach in two steps, by their events' name. */
function shownBy(collection: Collection, relations: CollectionServices['relations']): readonly string[] | undefined {
  const next = (of: Collection) => [...(relations.get(of)?.values() ?? [])].map((relation) => relation.target)
  const reached = new Set([collection, ...next(collection).flatMap((near) => [near, ...next(near)])])
  return [...reached].some((one) => one.options.changedWithoutEvents) ? undefined : [...new Set([...reached].map(eventCollection))]
}

/**
 * The relations `filter=` may reach, each with the fields it may compare there: filterable in the
 * related collection, and readable by whoever may read it (a field some callers may not read,
 * such as a user's email, is not reached through a relation), and the rows a caller may read.
 */
function relatedSpecs(relations: ReadonlyMap<string, Relation> | undefined): ReadonlyMap<string, RelatedSpec> {
  return new Map(
    [...(relations?.values() ?? [])].map(({ name, kind, column, target }) => {
      const restricted = new Set(restrictedReads(target))
      const filterable = new Map([...target.listSpec.filterable].filter(([field]) => !restricted.has(field)))
      const readable = (caller: unknown, alias: string, add: AddValue) => readableBy(target, caller as Caller | null, alias, add)
      const table = quote(target.options.table ?? target.name)
      return [name, { kind, column, table, filterable, searchable: target.listSpec.searchable, readable }]
    }),
  )
}

/**
 * Body validation is attached, not thrown, so that an unknown item or parent is a 404 before
 * an invalid body is a 422 (the order of checks in DESIGN.md).
 */
export function rejectInvalid(request: FastifyRequest): void {
  if (request.validationError) throw request.validationError
}

/** A collection's store on `db`. */
export const storeOf = (db: Database, collection: Collection, countLimit: number) =>
  createStore(db, {
    table: collection.options.table ?? collection.name,
    columns: collection.columns,
    listColumns: collection.listColumns,
    countLimit,
    trash: collection.options.trash !== undefined,
    // A nested item is gone while its parent is in the trash.
    ...(collection.options.parent?.collection.options.trash && {
      trashedParent: { table: collection.options.parent.collection.options.table ?? collection.options.parent.collection.name, column: collection.options.parent.field },
    }),
  })

export function handlerContext(collection: Collection, db: Database, versionNumber: number, services: CollectionServices): HandlerContext {
  const parent = collection.options.parent
  const parentStore = parent && storeOf(db, parent.collection, services.countLimit)
  const related = new Map<Collection, Views>()
  const viewsOf = (target: Collection) => {
    let views = related.get(target)
    if (!views) related.set(target, (views = collectionViews(target, versionNumber)))
    return views
  }
  return {
    ...services,
    ...callerAccess(collection, parentStore),
    ...collectionViews(collection, versionNumber),
    collection,
    db,
    store: storeOf(db, collection, services.countLimit),
    parentStore,
    select: fieldSelector(collection),
    include: includer(collection, services.relations, viewsOf),
    listSpec: { ...collection.listSpec, relations: relatedSpecs(services.relations.get(collection)) },
    shows: shownBy(collection, services.relations),
    representation: representationOf(collection.options.schemas, services.countLimit),
  }
}

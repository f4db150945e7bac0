/** Registers a collection's routes: list, aggregates (when it declares them), read, an item's history, create, replace, patch, delete (HEAD and OPTIONS follow). */
import type { FastifyInstance } from 'fastify'
import type { TObject } from 'typebox'
import { Timestamp } from '../schema-types.js'
import type { Database } from '../db/client.js'
import { idempotent } from '../http/idempotency.js'
import { refuseMethods } from '../http/routes.js'
import { requireBody } from '../http/body-parser.js'
import { collectionOperations, type Operation } from './operations.js'
import { hasHistory, type Collection } from './collection.js'
import { importerOf } from './import/importer.js'
import { EXPORT_TYPES } from './export/formats.js'
import { fieldsParameter } from './field-selection.js'
import { includeParameters } from './include.js'
import { listQuerySchema } from './list-query/parse.js'
import { restrictedReads } from './permissions.js'
import type { Params } from './caller-access.js'
import { handlerContext, type Body, type CollectionServices } from './handler-context.js'
import { listHandler, readHandler } from './read-handlers.js'
import { historyHandler } from './history/handler.js'
import { historyOperation } from './history/operation.js'
import { createdBefore, createHandler, deleteHandler, patchHandler, replaceHandler } from './write-handlers.js'
import { deleteManyHandler, patchManyHandler } from './change-many.js'
import { aggregatesHandler } from './aggregates/handler.js'
import { aggregatesOperation } from './aggregates/operation.js'
import { aggregateViews } from './aggregates/represent.js'

type WriteRoute = { Params: Params; Body: Body }

/** An item in the trash shows since when (src/resources/trash.ts): never required, as live items have none. */
const DELETED_AT = { ...Timestamp(), description: 'When the item was moved to the trash: only items in the trash have it (admins, `trashed=`).' }

/**
 * A field some callers may not read is absent for them: not required in the response schemas.
 * In a collection with a trash, items may show `deleted_at`.
 */
function responseSchemas(schemas: { item: TObject; summary: TObject }, restricted: readonly string[], trash: boolean) {
  const shown = (schema: TObject) =>
    ({
      ...schema,
      ...(trash ? { properties: { ...schema.properties, deleted_at: DELETED_AT } } : {}),
      required: (schema.required ?? []).filter((name) => !restricted.includes(name)),
    }) as TObject
  return restricted.length === 0 && !trash ? schemas : { item: shown(schemas.item), summary: shown(schemas.summary) }
}

/** The create's response: the item, and the write-only fields it shows that once. */
function createdSchema(collection: Collection, item: TObject): TObject {
  const { shownOnCreate } = collection
  if (shownOnCreate.length === 0) return item
  const given = collection.options.schemas.create.properties
  const shown = Object.fromEntries(shownOnCreate.map((name) => [name, given[name]!]))
  return { ...item, properties: { ...item.properties, ...shown }, required: [...(item.required ?? []), ...shownOnCreate] } as TObject
}

/** Registers the collection on `app`, already prefixed with the API version `version`. */
export function registerCollection(app: FastifyInstance, collection: Collection, db: Database, version: number, services: CollectionServices): void {
  const { parent } = collection.options
  const context = handlerContext(collection, db, version, services)
  const { bodies } = context.version
  const schemas = responseSchemas(context.version.schemas, restrictedReads(collection), collection.options.trash !== undefined)
  const base = parent ? `/${parent.collection.name}/:parentId/${collection.name}` : `/${collection.name}`
  const item = `${base}/:id`
  const readOnlyFields = new Set(collection.readOnly)
  const created = createdSchema(collection, schemas.item)
  const fields = fieldsParameter(collection)
  const include = includeParameters(collection, services.relations)
  const query = listQuerySchema(collection.listSpec, fields, include)
  const { reads, writes } = collectionOperations(app, collection, { ...schemas, created, bodies, fields, include, query, bulkMaxItems: services.bulkMaxItems })
  const route = (op: Operation) => ({ config: { readOnlyFields, document: op.document }, schema: op.schema })
  const write = (op: Operation) => ({ ...route(op), attachValidation: true, preValidation: requireBody })

  const list = route(reads.list)
  app.get(base, { ...list, config: { ...list.config, mediaTypes: EXPORT_TYPES } }, listHandler(context))
  if (collection.aggregates) {
    // A static segment: find-my-way matches it before the item's `:id`, so no item id (a UUID) is shadowed.
    const aggregates = `${base}/aggregates`
    const views = aggregateViews(collection, version, context.version.schemas.item)
    app.get(aggregates, route(aggregatesOperation(app, collection, query, views.schema)), aggregatesHandler(context, views))
    // The item's other methods would take `aggregates` for an id: the path answers them 405.
    if (collection.options.writes !== false) {
      app.route({ method: ['PUT', 'PATCH', 'DELETE'], url: aggregates, schema: { hide: true }, config: { refusal: true }, handler: refuseMethods('GET, HEAD, OPTIONS') })
    }
  }
  app.get(item, route(reads.read), readHandler(context))
  if (hasHistory(collection)) app.get(`${item}/history`, route(historyOperation(app, collection, schemas.item)), historyHandler(context))
  if (collection.options.writes === false) return
  const ops = writes()
  const create = write(ops.create)
  app.post<WriteRoute>(base, { ...create, config: { ...create.config, arrayBody: true, imports: importerOf(bodies.create, readOnlyFields) } }, idempotent(createHandler(context), context.keys, createdBefore(context)))
  app.put<WriteRoute>(item, write(ops.replace), replaceHandler(context))
  app.patch<WriteRoute>(item, write(ops.patch), patchHandler(context))
  app.delete(item, route(ops.remove), deleteHandler(context))
  app.patch<WriteRoute>(base, write(ops.patchMany), patchManyHandler(context))
  app.delete(base, route(ops.removeMany), deleteManyHandler(context))
}

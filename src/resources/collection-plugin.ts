/** Registers a collection's routes: list, read, create, replace, patch, delete (HEAD and OPTIONS follow). */
import type { FastifyInstance } from 'fastify'
import type { TObject } from 'typebox'
import type { Database } from '../db/client.js'
import { idempotent } from '../http/idempotency.js'
import { requireBody } from '../http/body-parser.js'
import { collectionOperations, type Operation } from './operations.js'
import { importerOf } from './import/importer.js'
import { EXPORT_TYPES } from './export/formats.js'
import type { Collection } from './collection.js'
import { fieldsParameter } from './field-selection.js'
import { includeParameters } from './include.js'
import { listQuerySchema } from './list-query/parse.js'
import { restrictedReads } from './permissions.js'
import type { Params } from './caller-access.js'
import { handlerContext, type Body, type CollectionServices } from './handler-context.js'
import { listHandler, readHandler } from './read-handlers.js'
import { createdBefore, createHandler, deleteHandler, patchHandler, replaceHandler } from './write-handlers.js'
import { deleteManyHandler, patchManyHandler } from './change-many.js'

type WriteRoute = { Params: Params; Body: Body }

/** A field some callers may not read is absent for them: not required in the response schemas. */
function responseSchemas(schemas: { item: TObject; summary: TObject }, restricted: readonly string[]) {
  const optional = (schema: TObject) => ({ ...schema, required: (schema.required ?? []).filter((name) => !restricted.includes(name)) }) as TObject
  return restricted.length === 0 ? schemas : { item: optional(schemas.item), summary: optional(schemas.summary) }
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
  const schemas = responseSchemas(context.version.schemas, restrictedReads(collection))
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
  app.get(item, route(reads.read), readHandler(context))
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

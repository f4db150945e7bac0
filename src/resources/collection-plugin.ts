/** Registers a collection's routes: list, read, create, replace, patch, delete, HEAD and OPTIONS. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Database } from '../db/client.js'
import { ApiError } from '../errors.js'
import { requireBody } from '../http/body-parser.js'
import type { ErrorRouteConfig } from '../http/error-handler.js'
import type { Collection } from './collection.js'
import { isUuid, uuidv7 } from './ids.js'
import { cursorPage } from './list-query/cursor.js'
import { cursorLinks, pageLinks } from './list-query/links.js'
import { parseListQuery, type RawQuery } from './list-query/parse.js'
import { representer, type Representation } from './represent.js'
import { createStore, type Scope } from './store.js'
import { changes, checkReadOnly, fullData, patchData, toColumns, type WriteData } from './writes.js'

type Params = { id?: string; parentId?: string }
type Body = Record<string, unknown>
type WriteRoute = { Params: Params; Body: Body }

/**
 * Times a replace or patch re-reads and retries when another write changed the item in between.
 * Every lost race means another writer succeeded, so this bounds the writers racing on one item.
 */
const WRITE_ATTEMPTS = 50

const notFound = () => new ApiError('NOT_FOUND')

const storeOf = (db: Database, collection: Collection) =>
  createStore(db, {
    model: collection.options.model,
    table: collection.options.table ?? collection.name,
    columns: collection.columns,
    listColumns: collection.listColumns,
    fieldNames: collection.fields.filter((f) => !f.computed).map((f) => f.name),
  })

/**
 * Body validation is attached, not thrown, so that an unknown item or parent is a 404 before
 * an invalid body is a 422 (the order of checks in DESIGN.md).
 */
function rejectInvalid(request: FastifyRequest): void {
  if (request.validationError) throw request.validationError
}

/** Registers the collection on `app` (already prefixed with the API version). */
export function registerCollection(app: FastifyInstance, collection: Collection, db: Database): void {
  const { options } = collection
  const store = storeOf(db, collection)
  const parent = options.parent
  const parentStore = parent && storeOf(db, parent.collection)
  const parentColumn = parent && collection.field.get(parent.field)!.column
  const summary = representer(collection.summaryFields, options.computed)
  const detail = representer(collection.fields, options.computed)
  const base = parent ? `/${parent.collection.name}/:parentId/${collection.name}` : `/${collection.name}`
  const itemPath = `${base}/:id`
  const config: ErrorRouteConfig = { readOnlyFields: new Set(collection.readOnly) }
  const itemSchema = options.schemas.item

  /** The item's scope: its id and, when nested, its parent. Malformed ids are answered like unknown ones. */
  function scopeOf(params: Params): Scope {
    if (!isUuid(params.id!) || (parent && !isUuid(params.parentId!))) throw notFound()
    return parentColumn ? { id: params.id, [parentColumn]: params.parentId } : { id: params.id }
  }

  /** The list's scope; a nested list under an unknown parent is a 404, not an empty list. */
  async function listScope(params: Params): Promise<Scope> {
    if (!parentStore || !parentColumn) return {}
    if (!isUuid(params.parentId!) || !(await parentStore.exists({ id: params.parentId }))) throw notFound()
    return { [parentColumn]: params.parentId }
  }

  async function list(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    const query = request.query as RawQuery
    const plan = parseListQuery(query, collection.listSpec)
    const { rows, total } = await store.list(plan, await listScope(request.params))
    const path = request.url.split('?', 1)[0]!
    reply.header('x-total-count', total)
    if (plan.cursor) {
      const page = cursorPage(rows, plan)
      reply.header('link', cursorLinks(path, query, page))
      return page.rows.map(summary)
    }
    reply.header('link', pageLinks(path, query, plan.page, Math.max(1, Math.ceil(total / plan.size))))
    return rows.map(summary)
  }

  async function read(request: FastifyRequest<{ Params: Params }>) {
    const row = await store.find(scopeOf(request.params))
    if (!row) throw notFound()
    return detail(row)
  }

  async function create(request: FastifyRequest<{ Params: Params; Body: Body }>, reply: FastifyReply) {
    const scope = await listScope(request.params)
    rejectInvalid(request)
    const data = fullData(collection, request.body)
    await options.hooks?.beforeWrite?.({ operation: 'create', data, parentId: request.params.parentId })
    const now = new Date()
    const row = await store
      .create({ ...toColumns(collection, data), ...scope, id: uuidv7(), createdAt: now, updatedAt: now })
      .catch((error: unknown) => {
        // The parent was deleted between the check and the insert: it is gone, as for a list.
        const orphan = parent && error instanceof ApiError && error.details.some((d) => d.field === parent.field)
        throw orphan ? notFound() : error
      })
    reply.code(201).header('location', `${request.url.split('?', 1)[0]}/${row.id as string}`)
    return detail(row)
  }

  /** Read, merge, write only if nobody wrote in between (else again); a write that changes nothing stores nothing. */
  async function update(request: FastifyRequest<{ Params: Params }>, operation: 'replace' | 'patch', toData: (current: Representation) => WriteData) {
    const params = request.params
    const scope = scopeOf(params)
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      const row = await store.find(scope)
      if (!row) throw notFound()
      rejectInvalid(request)
      const current = detail(row)
      const data = toData(current)
      await options.hooks?.beforeWrite?.({ operation, data, current, parentId: params.parentId })
      const changed = toColumns(collection, changes(data, current))
      if (Object.keys(changed).length === 0) return current
      // updated_at moves forward on every change, even two within one millisecond.
      const previous = row.updatedAt as Date
      changed.updatedAt = new Date(Math.max(Date.now(), previous.getTime() + 1))
      const updated = await store.updateIfUnchanged(scope, previous, changed)
      if (updated) return detail(updated)
    }
    throw new ApiError('CONFLICT', 'The item is being changed by other requests; try again.')
  }

  const replace = (request: FastifyRequest<{ Params: Params; Body: Body }>) =>
    update(request, 'replace', (current) => {
      checkReadOnly(collection, request.body, current)
      return fullData(collection, request.body)
    })

  const patch = (request: FastifyRequest<{ Params: Params; Body: Body }>) =>
    update(request, 'patch', () => patchData(collection, request.body))

  async function remove(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    if (!(await store.remove(scopeOf(request.params)))) throw notFound()
    return reply.code(204).send()
  }

  app.get(base, { config, schema: { response: { 200: Type.Array(options.schemas.summary) } } }, list)
  const write = { config, attachValidation: true, preValidation: requireBody }
  app.post<WriteRoute>(base, { ...write, schema: { body: collection.bodies.create, response: { 201: itemSchema } } }, create)
  app.get(itemPath, { config, schema: { response: { 200: itemSchema } } }, read)
  app.put<WriteRoute>(itemPath, { ...write, schema: { body: collection.bodies.replace, response: { 200: itemSchema } } }, replace)
  app.patch<WriteRoute>(itemPath, { ...write, schema: { body: collection.bodies.patch, response: { 200: itemSchema } } }, patch)
  app.delete(itemPath, { config }, remove)
}

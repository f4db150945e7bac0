/**
 * The route schemas of a collection's six operations: the schemas that validate and serialize
 * (shared per version as `#/components/schemas/<Name>`), and what the document adds to them
 * (operationId, tags, security, parameters, every answer with its headers).
 */
import type { FastifyInstance } from 'fastify'
import { Type, type TObject, type TSchema } from 'typebox'
import type { AccessRule, CollectionAccess } from '../auth/access.js'
import type { Collection } from '../resources/collection.js'
import { OPTIONAL_AUTH, REQUIRED_AUTH, type DocumentedRoute } from './document.js'
import { errors, noBody, success } from './responses.js'

/** `order_items` → `OrderItems`: a list's operationId noun. */
const pluralName = (table: string) => table.replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase())

/** `order_items` → `OrderItem`, `webhook_deliveries` → `WebhookDelivery`: a component's name and an operationId's noun. */
export function singularName(table: string): string {
  const plural = pluralName(table)
  return plural.endsWith('ies') ? `${plural.slice(0, -3)}y` : plural.replace(/s$/, '')
}

const security = (rule: AccessRule) => (rule === 'public' ? OPTIONAL_AUTH : REQUIRED_AUTH)

/** A read whose rule is not `public` can refuse: 401 without credentials, 403 with the wrong ones (writes always can: errors()). */
const refusals = (rule: AccessRule) => (rule === 'public' ? [] : [403])

const JSON_TYPES = ['application/json']
const PATCH_TYPES = ['application/json', 'application/merge-patch+json']

/** A route's schema, and what only the document takes (DocumentedRoute). */
export interface Operation {
  schema: object
  document: DocumentedRoute
}

export type ReadOperations = Record<'list' | 'read', Operation>
export type WriteOperations = Record<'create' | 'replace' | 'patch' | 'remove', Operation>

/** A collection's schemas in one version: its representations, the answer to a create, its request bodies, its list's query. */
export interface CollectionParts {
  item: TObject
  summary: TObject
  created: TObject
  bodies: { create: object; replace: object; patch: object }
  query: TObject
}

/**
 * A collection's operations in one version, its schemas added to `api` (that version's plugin)
 * as components named for the collection: `Product`, `ProductSummary`, `ProductCreate`...
 */
export function collectionOperations(api: FastifyInstance, collection: Collection, parts: CollectionParts): { reads: ReadOperations; writes: () => WriteOperations } {
  const table = collection.options.table ?? collection.name
  const name = singularName(table)
  const refTo = (suffix: string, schema: object): TSchema => {
    const id = `${name}${suffix}`
    api.addSchema({ ...schema, $id: id })
    return Type.Ref(id)
  }
  const item = refTo('', parts.item)
  const summary = refTo('Summary', parts.summary)
  const access: CollectionAccess = collection.options.access
  const parent = collection.options.parent
  const params = Type.Object({
    ...(parent ? { parentId: Type.String({ format: 'uuid', description: `The ${singularName(parent.collection.options.table ?? parent.collection.name).toLowerCase()}'s id.` }) } : {}),
    id: Type.String({ format: 'uuid' }),
  })
  const parentParams = parent ? Type.Object({ parentId: params.properties.parentId! }) : undefined
  const tags = [collection.name]
  const base = { tags, produces: JSON_TYPES }
  // Paths and queries are read by the handlers (an id that is no UUID names nothing: 404), so
  // their schemas are the document's only.
  const onItem: DocumentedRoute = { params }
  const onCollection: DocumentedRoute = parentParams ? { params: parentParams } : {}
  const op = (schema: object, document: DocumentedRoute, responses: DocumentedRoute['responses']): Operation => ({ schema, document: { ...document, responses } })
  const reads: ReadOperations = {
    list: op({
      ...base,
      operationId: `list${pluralName(table)}`,
      summary: `List ${collection.name}`,
      security: security(access.list),
      response: {
        200: success('A page of items, in order.', Type.Array(summary), ['etag', 'link', 'x-total-count?', 'preference-applied?']),
        304: noBody('Not modified: the If-None-Match tag is current.', ['etag']),
      },
    }, { ...onCollection, querystring: parts.query }, errors([...refusals(access.list), ...(parent ? [404] : [])])),
    read: op({
      ...base,
      operationId: `get${name}`,
      summary: `Read one of ${collection.name}`,
      security: security(access.read),
      response: {
        200: success('The item.', item, ['etag', 'last-modified']),
        304: noBody('Not modified: the If-None-Match tag is current.', ['etag', 'last-modified']),
      },
    }, onItem, errors([...refusals(access.read), 404, 412])),
  }
  // PUT and PATCH differ in their body only.
  const change = (operationId: string, summary: string, consumes: string[], body: TSchema) =>
    op({
      ...base,
      operationId: `${operationId}${name}`,
      summary: `${summary} one of ${collection.name}`,
      security: security(access.update),
      consumes,
      body,
      response: { 200: success('The item as it is now.', item, ['etag', 'last-modified']) },
    }, onItem, errors([404, 409, 412, 428], { unsafe: true, body: true }))
  // Only for a collection clients may write: its bodies' schemas are components only then.
  const writes = (): WriteOperations => ({
    create: op({
      ...base,
      operationId: `create${name}`,
      summary: `Create one of ${collection.name}`,
      security: security(access.create),
      consumes: JSON_TYPES,
      body: refTo('Create', parts.bodies.create),
      response: {
        201: success('Created.', parts.created === parts.item ? item : refTo('Created', parts.created), ['location', 'etag', 'last-modified', 'idempotent-replayed?']),
      },
    }, onCollection, errors([404, 409], { unsafe: true, body: true })),
    replace: change('replace', 'Replace', JSON_TYPES, refTo('Replace', parts.bodies.replace)),
    patch: change('update', 'Change fields (a JSON merge patch) of', PATCH_TYPES, refTo('Patch', parts.bodies.patch)),
    remove: op({
      tags,
      operationId: `delete${name}`,
      summary: `Delete one of ${collection.name}`,
      security: security(access.delete),
      response: {
        204: noBody('Deleted.'),
      },
    }, onItem, errors([404, 409, 412, 428], { unsafe: true })),
  })
  return { reads, writes }
}

/**
 * The route schemas of a collection's six operations, which belong with the collection (the
 * document only gathers them): the schemas that validate and serialize
 * (shared per version as `#/components/schemas/<Name>`), and what the document adds to them
 * (operationId, tags, security, parameters, every answer with its headers).
 */
import type { FastifyInstance } from 'fastify'
import { Type, type TObject, type TSchema } from 'typebox'
import type { AccessRule, CollectionAccess } from '../auth/access.js'
import { OPTIONAL_AUTH, REQUIRED_AUTH, type DocumentedRoute } from '../openapi/document.js'
import { requestHeaders } from '../openapi/request-headers.js'
import { errors, noBody, success } from '../openapi/responses.js'
import { Id } from '../schema-types.js'
import type { Collection } from './collection.js'
import { MAX_PAGE_SIZE } from './list-query/plan.js'
import { TRASHED_PARAMETER } from './list-query/parse.js'
import { BODY_LIMIT } from '../http/body-parser.js'

/** `order_items` → `OrderItems`: a list's operationId noun. */
export const pluralName = (table: string) => table.replace(/(^|_)([a-z])/g, (_, __, letter: string) => letter.toUpperCase())

/** `order_items` → `OrderItem`, `webhook_deliveries` → `WebhookDelivery`: a component's name and an operationId's noun. */
export function singularName(table: string): string {
  const plural = pluralName(table)
  return plural.endsWith('ies') ? `${plural.slice(0, -3)}y` : plural.replace(/s$/, '')
}

/** `orderItem` → `an order item`: one item in words, unless the collection names it (`noun`). */
export function itemNoun(collection: Collection): string {
  const words = collection.options.model.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`)
  return collection.options.noun ?? `${/^[aeiou]/.test(words) ? 'an' : 'a'} ${words}`
}

/** What a list's summary calls its items: `products`; below a parent, `a product's reviews`. */
export function listed(collection: Collection): string {
  const items = collection.name.replace(/[-_]/g, ' ')
  const parent = collection.options.parent?.collection
  return parent ? `${itemNoun(parent)}'s ${items}` : items
}

export const security = (rule: AccessRule) => (rule === 'public' ? OPTIONAL_AUTH : REQUIRED_AUTH)

/** Who may call an operation under each rule, for its description. */
export const WHO: Record<AccessRule, string> = {
  public: 'Anyone may call this; signed-in callers may see more.',
  authenticated: 'Any signed-in caller.',
  admin: 'Admins only.',
  'owner-or-admin': 'The owner (of the item, or of the item it belongs to) or an admin.',
  nobody: 'Switched off in this deployment: always 403.',
}

/** Who may list: an owner-scoped list of a collection's own items shows each caller theirs (resources/handler-context.ts). */
export const whoLists = (rule: AccessRule, nested: boolean) =>
  rule === 'owner-or-admin' && !nested ? 'Any signed-in caller: each lists the items they own, an admin every item.' : WHO[rule]

/**
 * A read whose rule is not `public` can refuse: 401 without credentials, 403 with the wrong ones
 * (writes always can: errors()); so can one of the trash, which only admins see.
 */
export const refusals = (rule: AccessRule, trash: unknown) => (rule === 'public' && !trash ? [] : [403])

export const JSON_TYPES = ['application/json']

/** How an export is asked for and what it holds, in the list's description. */
const EXPORT_NOTE =
  'With `Accept: text/csv` or `Accept: application/x-ndjson` it is an export instead: every matching item (no page, size or cursor), with the same filters, sort and fields, up to EXPORT_MAX_ROWS (more is 400 EXPORT_TOO_LARGE), as a file.'
const CSV_BODY =
  'RFC 4180 in UTF-8: a header row naming the fields in the schema\'s order, objects as dotted columns (`price.amount`), arrays as JSON text; an empty field is null, `""` the empty string.'
const NDJSON_BODY = 'One item per line, as in a page.'
const IMPORT_NOTE =
  ' As `text/csv` (a header row naming the fields, as an export writes them) or `application/x-ndjson` (an item per line), the body is an array of items too, its errors naming the line of each item.'
const PATCH_TYPES = ['application/json', 'application/merge-patch+json']

/** A route's schema, and what only the document takes (DocumentedRoute). */
export interface Operation {
  schema: object
  document: DocumentedRoute
}

export type ReadOperations = Record<'list' | 'read', Operation>
export type WriteOperations = Record<'create' | 'replace' | 'patch' | 'remove' | 'patchMany' | 'removeMany', Operation>

/** A collection's schemas in one version: its representations, the answer to a create, its request bodies, its list's query. */
export interface CollectionParts {
  item: TObject
  summary: TObject
  created: TObject
  bodies: { create: object; replace: object; patch: object }
  query: TObject
  /** The `fields` parameter (src/resources/field-selection.ts). */
  fields: TSchema
  /** The `include` parameters of a read (src/resources/include.ts). */
  include: Record<string, TSchema>
  /** The most items an array POST creates (BULK_MAX_ITEMS). */
  bulkMaxItems: number
}

/**
 * A collection's operations in one version, its schemas added to `api` (that version's plugin)
 * as components named for the collection: `Product`, `ProductSummary`, `ProductCreate`...
 */
export function collectionOperations(api: FastifyInstance, collection: Collection, parts: CollectionParts): { reads: ReadOperations; writes: () => WriteOperations } {
  const table = collection.options.table ?? collection.name
  const name = singularName(table)
  const noun = itemNoun(collection)
  const refTo = (suffix: string, schema: object): TSchema => {
    const id = `${name}${suffix}`
    api.addSchema({ ...schema, $id: id })
    return Type.Ref(id)
  }
  const item = refTo('', parts.item)
  // A summary with every field of the item (a webhook delivery's) is the item's schema, not a copy of it.
  const summary = JSON.stringify(parts.summary) === JSON.stringify(parts.item) ? item : refTo('Summary', parts.summary)
  const access: CollectionAccess = collection.options.access
  const parent = collection.options.parent
  const params = Type.Object({
    ...(parent ? { parentId: Id({ description: `The ${singularName(parent.collection.options.table ?? parent.collection.name).toLowerCase()}'s id.` }) } : {}),
    id: Id(),
  })
  const parentParams = parent ? Type.Object({ parentId: params.properties.parentId! }) : undefined
  const tags = [collection.name]
  const base = { tags, produces: JSON_TYPES }
  // Changes that must be conditional say so (428 without If-Match); others may be.
  const requireIfMatch = collection.options.requireIfMatch === true
  const conditionalWrite = requireIfMatch
    ? 'Needs If-Match with the ETag you read: 428 without it, 412 if the item has changed since.'
    : 'If-Match or If-Unmodified-Since make it conditional: 412 if the item has changed since.'
  // The trash (src/resources/trash.ts): admins read it, restore from it, and delete from it for good.
  const trash = collection.options.trash
  const inTrash = (description: string): Record<string, TSchema> => (trash ? { trashed: Type.Optional(Type.Literal('only', { description })) } : {})
  const answered = Type.Object({ fields: Type.Optional(parts.fields) })
  const readQuery = Type.Object({
    fields: Type.Optional(parts.fields),
    ...(trash ? { trashed: Type.Optional(TRASHED_PARAMETER) } : {}),
    ...Object.fromEntries(Object.entries(parts.include).map(([name, schema]) => [name, Type.Optional(schema)])),
  })
  const onDelete: DocumentedRoute = {
    params,
    ...(trash ? { querystring: Type.Object(inTrash('Admins only: delete an item in the trash for good.')) } : {}),
    headers: requestHeaders(['If-Match', 'If-Unmodified-Since'], requireIfMatch ? ['If-Match'] : []),
  }
  const onChange: DocumentedRoute = {
    params,
    querystring: answered,
    headers: requestHeaders(['If-Match', 'If-Unmodified-Since', 'Prefer'], requireIfMatch ? ['If-Match'] : []),
  }
  const onPatch: DocumentedRoute = trash
    ? { ...onChange, querystring: Type.Object({ ...answered.properties, ...inTrash('Admins only: restore an item from the trash; the body is `{"deleted_at": null}` and nothing else.') }) }
    : onChange
  const trashNote = trash
    ? ` The item goes to the trash for ${trash.days} days (event \`${table}.trashed\`): gone from reads and lists, its unique values kept; admins restore it (PATCH with \`trashed=only\`) or delete it for good (DELETE with \`trashed=only\`, event \`${table}.deleted\`) before housekeeping does.`
    : ''
  const changeErrors = [404, 409, 412, ...(requireIfMatch ? [428] : [])]
  // Paths and queries are read by the handlers (an id that is no UUID names nothing: 404), so
  // their schemas are the document's only.
  const onCollection: DocumentedRoute = parentParams ? { params: parentParams } : {}
  const op = (schema: object, document: DocumentedRoute, responses: DocumentedRoute['responses']): Operation => ({ schema, document: responses ? { ...document, responses } : document })
  const page = Type.Array(summary, { maxItems: MAX_PAGE_SIZE })
  // The route serializes a page (JSON); the document also has the export's media types, whose
  // answers have no validators and no paging links (src/resources/export/).
  const listAnswer = success(
    'A page of items, in order; or, asked for as text/csv or application/x-ndjson, every matching item as a file (Content-Disposition), without ETag and Link.',
    page,
    ['ETag?', 'Link?', 'X-Total-Count?', 'Preference-Applied?', 'Content-Disposition?'],
  ) as unknown as { description: string; headers: object }
  const exported = {
    description: listAnswer.description,
    headers: listAnswer.headers,
    content: {
      'application/json': { schema: { ...page, description: 'A page of items, in order.' } },
      'text/csv': { schema: { type: 'string', description: CSV_BODY } },
      'application/x-ndjson': { schema: { ...summary, description: NDJSON_BODY } },
    },
  }
  const reads: ReadOperations = {
    list: op({
      ...base,
      operationId: `list${pluralName(table)}`,
      summary: `List ${listed(collection)}`,
      description: `${whoLists(access.list, parent !== undefined)} Pages by number or by cursor, sorted and filtered by the query parameters below; Link names the other pages; \`Prefer: count=exact\` counts past COUNT_LIMIT. If-None-Match answers 304 while the page is the same; If-Match, 412 once it is not. ${EXPORT_NOTE}`,
      security: security(access.list),
      response: {
        200: success('A page of items, in order.', page, ['ETag', 'Link', 'X-Total-Count?', 'Preference-Applied?']),
        304: noBody('Not modified: the If-None-Match tag is current.', ['ETag']),
      },
    }, { ...onCollection, querystring: parts.query, headers: requestHeaders(['If-None-Match', 'If-Match', 'Prefer']) }, { ...errors([...refusals(access.list, trash), ...(parent ? [404] : []), 412]), 200: exported }),
    read: op({
      ...base,
      operationId: `get${name}`,
      summary: `Read ${noun}`,
      description: `${WHO[access.read]} If-None-Match or If-Modified-Since answer 304 without a body when the item has not changed.`,
      security: security(access.read),
      response: {
        // Not with include=: the item's own time says nothing of what it embeds.
        200: success('The item.', item, ['ETag', 'Last-Modified?']),
        304: noBody('Not modified: the If-None-Match tag is current.', ['ETag', 'Last-Modified?']),
      },
    }, { params, querystring: readQuery, headers: requestHeaders(['If-None-Match', 'If-Modified-Since', 'If-Match', 'If-Unmodified-Since']) }, errors([...refusals(access.read, trash), 400, 404, 412])),
  }
  // PUT and PATCH differ in their body only.
  const change = (operationId: string, summary: string, consumes: string[], body: TSchema, semantics: string, document: DocumentedRoute) =>
    op({
      ...base,
      operationId: `${operationId}${name}`,
      summary,
      description: `${WHO[access.update]} ${semantics} ${conditionalWrite}`,
      security: security(access.update),
      consumes,
      body,
      response: {
        200: success('The item as it is now.', item, ['ETag', 'Last-Modified', 'Content-Location', 'Preference-Applied?']),
        204: noBody('Changed, answered without the item: Prefer: return=minimal.', ['ETag', 'Last-Modified', 'Preference-Applied']),
      },
    }, document, errors(changeErrors, { unsafe: true, body: true }))
  // Only for a collection clients may write: its bodies' schemas are components only then.
  const writes = (): WriteOperations => {
    const createBody = refTo('Create', parts.bodies.create)
    const patchBody = refTo('Patch', parts.bodies.patch)
    // A change by filter: the list's filters, Prefer: max-affected (DESIGN "Writing many").
    const byFilter: DocumentedRoute = { ...onCollection, querystring: parts.query, headers: requestHeaders(['Prefer'], ['Prefer']) }
    const byFilterNote = `Admins only. Every ${listed(collection)} item the filters match (at least one filter; no paging or sort), in one transaction; \`Prefer: max-affected=N\` (at most ${parts.bulkMaxItems}) is required, and when more than N match the answer is 400 TOO_MANY_AFFECTED and nothing changes.`
    const created = parts.created === parts.item ? item : refTo('Created', parts.created)
    const unique = collection.options.unique ?? []
    const upserts = unique.length > 0
    const createQuery = Type.Object({
      fields: Type.Optional(parts.fields),
      ...(upserts ? { on_conflict: Type.Optional(Type.Union(unique.map((field) => Type.Literal(field)), { description: 'The unique field that finds the item an upsert changes or leaves; with `Prefer: resolution=merge-duplicates` or `resolution=ignore-duplicates`.' })) } : {}),
    })
    const many = (schema: TSchema, description: string) => ({ type: 'array', items: schema, minItems: 1, maxItems: parts.bulkMaxItems, description })
    const upsertNote = upserts
      ? ` An upsert (\`on_conflict=${unique.join('|')}\` with \`Prefer: resolution=merge-duplicates\`) changes the item that holds the value as a PATCH would, or creates it; \`resolution=ignore-duplicates\` leaves it as it is. 200 when an item was not created.`
      : ''
    return {
      create: op({
        ...base,
        operationId: `create${name}`,
        summary: `Create ${noun}, or several`,
        description: `${WHO[access.create]} A JSON array creates every item in one transaction, or none (at most ${parts.bulkMaxItems}): an item's error names it by its index (\`[3].sku\`).${IMPORT_NOTE}${upsertNote} With an Idempotency-Key, a retry gets the first answer again and nothing is created twice.`,
        security: security(access.create),
        consumes: JSON_TYPES,
        // One item or an array of them; an array's errors name the item (`/3/sku`: `[3].sku`).
        body: { if: { type: 'array' }, then: { type: 'array', items: createBody }, else: createBody },
        response: {
          201: success(
            'Created. Without a body under Prefer: return=minimal (unless it shows a secret once).',
            created,
            ['Location', 'ETag', 'Last-Modified', 'Idempotent-Replayed?', 'Preference-Applied?'],
          ),
        },
      }, {
        ...onCollection,
        querystring: createQuery,
        headers: requestHeaders(['Idempotency-Key', 'Prefer']),
        body: {
          content: {
            'application/json': { schema: { oneOf: [createBody, many(createBody, 'Several items, created together or not at all.')] } },
            'text/csv': { schema: { type: 'string', maxLength: BODY_LIMIT, description: `Items to create, a row each after a header row naming their fields (dotted for objects: \`price.amount\`); an unquoted empty field leaves the field out, \`""\` is the empty string. Columns of fields a create does not take (\`id\`, what an export also writes) are skipped.` } },
            'application/x-ndjson': { schema: { type: 'string', maxLength: BODY_LIMIT, description: 'Items to create, one JSON object per line, as in an array; fields a create does not take (`id`, what an export also writes) are left out.' } },
          },
        },
        responses: {
          ...(upserts ? { 200: success('Upserted: an item held the value already, and was changed (merge-duplicates) or left (ignore-duplicates); the item, or every item of an array, in its order.', { oneOf: [item, many(item, 'Every item, in the request\'s order.')] } as unknown as TSchema, ['Content-Location?', 'ETag?', 'Last-Modified?', 'Preference-Applied']) } : {}),
          201: success(
            'Created: the item (Location names it), or every item of an array in the request\'s order (no Location). Without a body under Prefer: return=minimal (unless it shows a secret once).',
            { oneOf: [created, many(created, 'Every item, in the request\'s order.')] } as unknown as TSchema,
            ['Location?', 'ETag?', 'Last-Modified?', 'Idempotent-Replayed?', 'Preference-Applied?'],
          ),
          ...errors([404, 409, 413], { unsafe: true, body: true }),
        },
      }, undefined),
    replace: change('replace', `Replace ${noun}`, JSON_TYPES, refTo('Replace', parts.bodies.replace), 'A field left out takes its default, as in a create; read-only fields may be sent back unchanged.', onChange),
    patch: change(
      'update',
      `Change fields of ${noun} (JSON merge patch)`,
      PATCH_TYPES,
      patchBody,
      `A field left out stays as it is; null clears a nullable one.${trash ? ` With \`trashed=only\` (admins), \`{"deleted_at": null}\` restores the item from the trash (event \`${table}.restored\`).` : ''}`,
      onPatch,
    ),
    remove: op({
      tags,
      operationId: `delete${name}`,
      summary: `Delete ${noun}`,
      description: `${WHO[access.delete]}${trashNote} ${conditionalWrite}`,
      security: security(access.delete),
      response: {
        204: noBody('Deleted.'),
      },
    }, onDelete, errors(changeErrors, { unsafe: true })),
      patchMany: op({
        ...base,
        operationId: `update${pluralName(table)}`,
        summary: `Change fields of every ${itemNoun(collection).replace(/^an? /, '')} a filter matches`,
        description: `${byFilterNote} Each item changes as a PATCH of it would, with its rules and its event.`,
        security: REQUIRED_AUTH,
        consumes: PATCH_TYPES,
        body: patchBody,
        response: {
          200: success('The items the filters matched, as they are now.', Type.Array(summary, { maxItems: parts.bulkMaxItems }), ['Preference-Applied']),
        },
      }, byFilter, errors([403, 409, ...(parent ? [404] : []), ...(requireIfMatch ? [428] : [])], { unsafe: true, body: true })),
      removeMany: op({
        tags,
        operationId: `delete${pluralName(table)}`,
        summary: `Delete every ${itemNoun(collection).replace(/^an? /, '')} a filter matches`,
        description: `${byFilterNote} Each item goes as a DELETE of it would, with its event.`,
        security: REQUIRED_AUTH,
        response: {
          204: noBody('Deleted.', ['Preference-Applied']),
        },
      }, byFilter, errors([403, 409, ...(parent ? [404] : []), ...(requireIfMatch ? [428] : [])], { unsafe: true })),
    }
  }
  return { reads, writes }
}

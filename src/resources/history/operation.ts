/**
 * The route schema of an item's history and what the document adds: its entries typed by the
 * collection's fields in the version (`#/components/schemas/<Name>HistoryEntry`), its query, its
 * answers.
 */
import type { FastifyInstance } from 'fastify'
import { Type, type TObject, type TSchema } from 'typebox'
import { requestHeaders } from '../../openapi/request-headers.js'
import { errors, noBody, success } from '../../openapi/responses.js'
import { EventId, Id, Int32, MAX_EVENT_ID, Nullable, Timestamp } from '../../schema-types.js'
import type { Collection } from '../collection.js'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../list-query/plan.js'
import { TRASHED_PARAMETER } from '../list-query/parse.js'
import { itemNoun, JSON_TYPES, refusals, security, singularName, WHO, type Operation } from '../operations.js'

/** Fields no entry lists as changed (entries.ts): the entry's own time says when. */
const UNCOUNTED = ['id', 'created_at', 'updated_at']

/** `schema` or null: a field's value before a change may be one the field no longer allows. */
function orNull(schema: TSchema): TSchema {
  const { type, anyOf } = schema as { type?: unknown; anyOf?: { type?: unknown }[] }
  if (typeof type === 'string') return Nullable(schema)
  if ((Array.isArray(type) && type.includes('null')) || anyOf?.some((branch) => branch.type === 'null')) return schema
  return Type.Union([schema, Type.Null()])
}

/** Per version's plugin: the `{ from, to }` components made so far, by their schema. */
const changeComponents = new WeakMap<FastifyInstance, Map<string, string>>()

const pascal = (name: string) => name.replace(/(^|[_-])([a-z])/g, (_, __, letter: string) => letter.toUpperCase())

/**
 * A field's `{ from, to }` as a component shared by every field of that schema (an amount's is
 * `MoneyChange`): the document writes no object schema twice. Named for what the field's schema
 * refers to or its format, else for the first field that has it.
 */
function changeOf(api: FastifyInstance, schema: TSchema, firstUser: string): TSchema {
  const change = Type.Object({ from: orNull(schema), to: orNull(schema) }, { additionalProperties: false })
  const key = JSON.stringify(change)
  let made = changeComponents.get(api)
  if (!made) changeComponents.set(api, (made = new Map()))
  let id = made.get(key)
  if (!id) {
    const { $ref, format } = schema as { $ref?: string; format?: string }
    const named = $ref ? `${$ref.split('/').pop()}Change` : format ? `${pascal(format)}Change` : undefined
    id = named && ![...made.values()].includes(named) ? named : `${firstUser}Change`
    api.addSchema({ ...change, $id: id })
    made.set(key, id)
  }
  return Type.Ref(id)
}

/** `{ field: { from, to } }` over the item's fields in this version; a caller gets those they may read. */
function changesSchema(api: FastifyInstance, entry: string, item: TObject): TSchema {
  const properties = Object.entries(item.properties).filter(([name]) => !UNCOUNTED.includes(name))
  const changes = properties.map(([name, schema]) => [name, Type.Optional(changeOf(api, schema, `${entry}${pascal(name)}`))])
  return Nullable(Type.Object(Object.fromEntries(changes), { additionalProperties: false }), {
    description: 'The fields that changed, each with its value before and after, among those you may read; absent on a creation or deletion; null when the event before this one is no longer kept, so what changed cannot be told.',
  })
}

/** The entry of one event, a component named for the collection. */
function entrySchema(api: FastifyInstance, entry: string, item: TObject): TObject {
  return Type.Object(
    {
      id: EventId({ description: 'The event\'s id, as the change feed and webhooks give it.' }),
      type: Type.String({ maxLength: 100, description: '`<collection>.created`, `.updated`, `.deleted`, or a state move (`orders.status_changed`, beside the `updated` of the same change).' }),
      occurred_at: Timestamp(),
      actor_id: Nullable(Id(), { description: 'The user who made the change; null when nobody was signed in.' }),
      changes: Type.Optional(changesSchema(api, entry, item)),
    },
    { additionalProperties: false },
  )
}

/** The history's operation on `api` (a version's plugin), `item` the collection's item schema there. */
export function historyOperation(api: FastifyInstance, collection: Collection, item: TObject): Operation {
  const name = singularName(collection.options.table ?? collection.name)
  const { access, parent } = collection.options
  api.addSchema({ ...entrySchema(api, name, item), $id: `${name}HistoryEntry` })
  const page = Type.Array(Type.Ref(`${name}HistoryEntry`), { maxItems: MAX_PAGE_SIZE })
  const params = Type.Object({
    ...(parent ? { parentId: Id({ description: `The ${singularName(parent.collection.options.table ?? parent.collection.name).toLowerCase()}'s id.` }) } : {}),
    id: Id(),
  })
  const query = Type.Object({
    size: Type.Optional(Int32({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'Entries per page.' })),
    cursor: Type.Optional(Type.String({ maxLength: String(MAX_EVENT_ID).length, pattern: '^[0-9]*$', description: 'Where a page starts: the cursor of the Link rel="next" of the page before; empty or absent: the newest entries.' })),
    ...(collection.options.trash ? { trashed: Type.Optional(TRASHED_PARAMETER) } : {}),
  })
  const schema = {
    tags: [collection.name],
    produces: JSON_TYPES,
    operationId: `get${name}History`,
    summary: `Read the history of ${itemNoun(collection)}`,
    description: `${WHO[access.read]} The item's changes, newest first, from the event log: as far back as the change feed keeps events${collection.options.history ? `, and for this collection ${collection.options.history.days} days` : ''}. Each change lists the fields that changed, from and to, as this version shows them and only those you may read. Link names the next page; If-None-Match answers 304 while the page is the same.`,
    security: security(access.read),
    response: {
      200: success('The newest entries after the cursor.', page, ['ETag', 'Link']),
      304: noBody('Not modified: the If-None-Match tag is current.', ['ETag']),
    },
  }
  const document = { params, querystring: query, headers: requestHeaders(['If-None-Match', 'If-Match']), responses: errors([...refusals(access.read, collection.options.trash), 404, 412]) }
  return { schema, document }
}

/** The aggregates operation of a collection in one API version: its route schema and what its document shows. */
import type { FastifyInstance } from 'fastify'
import { Type, type TObject, type TSchema } from 'typebox'
import { requestHeaders } from '../../openapi/request-headers.js'
import { errors, noBody, success } from '../../openapi/responses.js'
import { Id } from '../../schema-types.js'
import type { Collection } from '../collection.js'
import { listed, pluralName, security, singularName, whoLists, type Operation } from '../operations.js'
import { MAX_AGGREGATE_PARAMETER_LENGTH, MAX_GROUPS, notTakenByAggregates } from './parse.js'

/** A comma-separated list of `names`, each at most once, as a pattern (the parser refuses a repeat). */
const listOf = (names: readonly string[]) => {
  const one = `(${names.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`
  return `^${one}(,${one})*$`
}

/**
 * The operation, its group's schema added to `api` as `<Item>Aggregate`. `listQuery`: the list's
 * query parameters, whose filters (and `q`, `filter`) it takes; `group`: one group's schema.
 */
export function aggregatesOperation(api: FastifyInstance, collection: Collection, listQuery: TObject, group: TObject): Operation {
  const spec = collection.aggregates!
  const table = collection.options.table ?? collection.name
  const { access, parent } = collection.options
  const id = `${singularName(table)}Aggregate`
  api.addSchema({ ...group, $id: id })
  const groupable = [...spec.groupable.keys()]
  const metrics = [...spec.metrics.keys()]
  const filters = Object.entries(listQuery.properties as Record<string, TSchema>).filter(([name]) => !notTakenByAggregates(name))
  const querystring = Type.Object({
    ...(groupable.length > 0
      ? {
          group_by: Type.Optional(Type.String({
            pattern: listOf(groupable),
            maxLength: Math.min(MAX_AGGREGATE_PARAMETER_LENGTH, groupable.join(',').length),
            description: `Comma-separated fields to group by, each once: ${groupable.join(', ')}. Without it, one group of every matching item.`,
          })),
        }
      : {}),
    metrics: Type.Optional(Type.String({
      pattern: listOf(metrics),
      maxLength: Math.min(MAX_AGGREGATE_PARAMETER_LENGTH, metrics.join(',').length),
      default: 'count',
      description: `Comma-separated metrics, each once: ${metrics.join(', ')}. \`fn:field\` answers as \`fn_field\`; an average is rounded to 2 decimals.`,
    })),
    ...Object.fromEntries(filters),
  })
  // An owner-scoped list's rule, in this operation's words.
  const ownItems = access.list === 'owner-or-admin' && !parent
  const parentParams = parent ? Type.Object({ parentId: Id({ description: `The ${singularName(parent.collection.options.table ?? parent.collection.name).toLowerCase()}'s id.` }) }) : undefined
  return {
    schema: {
      tags: [collection.name],
      produces: ['application/json'],
      operationId: `aggregate${pluralName(table)}`,
      summary: `Aggregate ${listed(collection)}`,
      description:
        `${ownItems ? 'Any signed-in caller: each aggregates the items they own, an admin every item.' : whoLists(access.list, parent !== undefined)} ` +
        "Counts, sums, averages, least and greatest values of the items the filters match (the list's filters), " +
        `grouped by the group_by fields and sorted by them; at most ${MAX_GROUPS.toLocaleString('en')} groups (more: 400 TOO_MANY_GROUPS). ` +
        'A field you may not read cannot be grouped or aggregated (403). If-None-Match answers 304 while the answer is the same.',
      security: security(access.list),
      response: {
        200: success('The groups, sorted by their keys (nulls last).', Type.Array(Type.Ref(id), { maxItems: MAX_GROUPS }), ['ETag']),
        304: noBody('Not modified: the If-None-Match tag is current.', ['ETag']),
      },
    },
    document: {
      ...(parentParams ? { params: parentParams } : {}),
      querystring,
      headers: requestHeaders(['If-None-Match', 'If-Match']),
      responses: errors([403, ...(parent ? [404] : []), 412]),
    },
  }
}

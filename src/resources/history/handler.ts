/**
 * GET (and HEAD) `/{collection}/{id}/history`: the item's events, newest first, for whoever may
 * read the item, found as its read finds it (404, or 403 where the read is) on the same database;
 * paged by a cursor with Link, conditional on a tag of exactly what is answered.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { itemEvents } from '../../db/history.js'
import { entityTag } from '../../http/conditional.js'
import { requestPath } from '../../http/request-target.js'
import { appendHeader } from '../../http/response-headers.js'
import { notFound, type Params } from '../caller-access.js'
import { eventCollection } from '../collection.js'
import type { HandlerContext } from '../handler-context.js'
import { linkPrefix } from '../list-query/links.js'
import type { RawQuery } from '../list-query/parse.js'
import { conditionalRead } from '../read-handlers.js'
import type { Row } from '../represent.js'
import { onShelf, shelfOf } from '../trash.js'
import { historyEntries, type HistoryEntry } from './entries.js'
import { parseHistoryQuery } from './query.js'

/** first, and next after the page's last entry when older ones follow: a cursor is an event id, newest first. */
function historyLinks(path: string, query: RawQuery, page: readonly HistoryEntry[], more: boolean): string {
  const prefix = linkPrefix(path, query, 'cursor')
  const links = [`<${prefix}cursor=>; rel="first"`]
  if (more) links.push(`<${prefix}cursor=${page.at(-1)!.id}>; rel="next"`)
  return links.join(', ')
}

export const historyHandler = ({ collection, store, scopeOf, authorize, standing, detail, readYourWrites }: HandlerContext) => {
  const events = eventCollection(collection)
  const state = collection.options.states?.field
  return async function history(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    authorize(request, 'read')
    const shelf = shelfOf(collection, request, 'read')
    const query = request.query as RawQuery
    const plan = parseHistoryQuery(query)
    const on = await readYourWrites.reads(request)
    const row = await store.find(onShelf(scopeOf(request.params), shelf), on)
    if (!row) throw notFound()
    const caller = await standing(request, 'read', request.params, row)
    // One event past the page: the state the page's last change started from, and whether more follow.
    const read = await itemEvents(on, { collection: events, itemId: row.id as string, before: plan.before, limit: plan.size + 1 })
    const body = historyEntries(read, plan.size, (item: Row) => detail(item, caller), state)
    const link = historyLinks(requestPath(request), query, body, read.length > plan.size)
    appendHeader(reply, 'link', link)
    // The tag is the answer's hash: a new event, a pruned one or another view of the fields is another tag.
    return conditionalRead(request, reply, body, { etag: entityTag([body, link]) }, collection.options.cacheMaxAge)
  }
}

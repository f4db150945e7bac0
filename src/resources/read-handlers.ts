/** GET (and HEAD) of a collection, a page by number or by cursor, and of one item; conditional on their ETags. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { allowCaching, entityTag, evaluate, setValidators, withEmbedded, type Validators } from '../http/conditional.js'
import { requestPath } from '../http/request-target.js'
import { preferenceApplied, preferences, varyByPrefer } from '../http/prefer.js'
import { appendHeader } from '../http/response-headers.js'
import { notFound, type Params } from './caller-access.js'
import { bodyOf } from './field-selection.js'
import type { HandlerContext } from './handler-context.js'
import { embedded, embeddedSelect, type IncludePlan } from './include.js'
import { cursorPage } from './list-query/cursor.js'
import { cursorLinks, pageLinks } from './list-query/links.js'
import { parseListQuery, type RawQuery } from './list-query/parse.js'
import type { Representation, Row } from './represent.js'
import { currentTag, listTag } from './revalidation.js'
import type { Extra } from './store.js'
import { onShelf, shelfOf } from './trash.js'
import { exportList } from './export/handler.js'
import { EXPORT_FORMATS } from './export/formats.js'

/** 200 with the body, or 304 without one; both with the validators and caching headers of the 200. */
export function conditionalRead<T>(request: FastifyRequest, reply: FastifyReply, body: T, validators: Validators, maxAge: number | undefined): T | FastifyReply {
  const outcome = evaluate(request, validators)
  setValidators(reply, validators)
  allowCaching(request, reply, maxAge)
  return outcome === 'not-modified' ? reply.code(304).send() : body
}

// Reads may be served by a read replica, one that has the caller's last write (readYourWrites).
/** The select list's additions for the related items a request embeds (include=). */
const extraFor = (included: IncludePlan | undefined, request: FastifyRequest): Extra | undefined =>
  included && ((outer, add) => embeddedSelect(included, request.caller, outer, add))

export const listHandler = (context: HandlerContext) => {
  const { collection, store, summary, authorize, placement, select, include, listSpec, versions, shows, representation, readYourWrites } = context
  return async function list(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    authorize(request, 'list')
    const shelf = shelfOf(collection, request, 'list')
    // Accept: text/csv or application/x-ndjson: every matching row, as a file (src/resources/export/).
    const format = EXPORT_FORMATS.get(request.responseType)
    if (format) return exportList(context, request, reply, format, shelf)
    const query = request.query as RawQuery
    const exactCount = preferences(request).get('count') === 'exact'
    const plan = parseListQuery(query, listSpec, exactCount)
    const selection = select(query.fields)
    const included = include(query)
    const placed = await placement(request, 'list', request.params)
    const { standing } = placed
    const scope = onShelf(placed.scope, shelf)
    varyByPrefer(reply)
    versions.follow()
    // The client's page is current: answered without reading it.
    const current = await currentTag(request, representation, versions, shows, readYourWrites.lastWrite)
    if (current) return conditionalRead(request, reply, undefined, { etag: current }, collection.options.cacheMaxAge)
    // How far the tail had read before the page is, at what the page is read from.
    const { on, at: readTo } = await readYourWrites.pageReads(request, versions.readTo)
    const { rows, total } = await store.list(plan, scope, on, selection?.columns, extraFor(included, request), request.caller)
    const represent = included
      ? (row: Row) => ({ ...summary(row, standing(row), selection), ...embedded(included, row, request.caller) })
      : (row: Row) => summary(row, standing(row), selection)
    const path = requestPath(request)
    let body: Representation[]
    let link: string
    if (plan.cursor) {
      const page = cursorPage(rows, plan)
      body = page.rows.map(represent)
      link = cursorLinks(path, query, page)
    } else {
      body = rows.slice(0, plan.size).map(represent)
      const lastPage = total === undefined ? undefined : Math.max(1, Math.ceil(total / plan.size))
      link = pageLinks(path, query, plan.page, lastPage, rows.length > plan.size)
    }
    // Past COUNT_LIMIT the total is unknown: no X-Total-Count rather than a wrong one.
    if (total !== undefined) reply.header('x-total-count', total)
    if (exactCount) preferenceApplied(reply, 'count=exact')
    appendHeader(reply, 'link', link)
    // A page is its items, its total and its links: a change to any of them is a new page.
    const etag = listTag(request, representation, entityTag([body, total ?? null, link]), readTo?.horizon)
    const asked = selection !== undefined || included !== undefined
    return conditionalRead(request, reply, bodyOf(request, reply, asked, body), { etag }, collection.options.cacheMaxAge)
  }
}

export const readHandler = ({ collection, store, detail, scopeOf, validators, authorize, standing, select, include, readYourWrites }: HandlerContext) =>
  async function read(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    authorize(request, 'read')
    const shelf = shelfOf(collection, request, 'read')
    const query = request.query as RawQuery
    const selection = select(query.fields)
    const included = include(query)
    const row = await store.find(onShelf(scopeOf(request.params), shelf), await readYourWrites.reads(request), selection?.columns, extraFor(included, request))
    if (!row) throw notFound()
    const caller = await standing(request, 'read', request.params, row)
    const representation = detail(row, caller, selection)
    const tags = validators(row, caller, selection)
    if (!included) return conditionalRead(request, reply, bodyOf(request, reply, selection !== undefined, representation), tags, collection.options.cacheMaxAge)
    // The related items are part of the representation: its ETag changes with them, and
    // Last-Modified, the item's own, would not, so it is not sent.
    const related = embedded(included, row, request.caller)
    const body = bodyOf(request, reply, true, { ...representation, ...related })
    return conditionalRead(request, reply, body, { etag: withEmbedded(tags.etag, related) }, collection.options.cacheMaxAge)
  }

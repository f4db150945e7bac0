/** GET (and HEAD) of a collection, a page by number or by cursor, and of one item; conditional on their ETags. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { allowCaching, entityTag, evaluate, setValidators, type Validators } from '../http/conditional.js'
import { requestPath } from '../http/request-target.js'
import { preferenceApplied, preferences, varyByPrefer } from '../http/prefer.js'
import { appendHeader } from '../http/response-headers.js'
import { notFound, type Params } from './caller-access.js'
import { bodyOf } from './field-selection.js'
import type { HandlerContext } from './handler-context.js'
import { cursorPage } from './list-query/cursor.js'
import { cursorLinks, pageLinks } from './list-query/links.js'
import { parseListQuery, type RawQuery } from './list-query/parse.js'
import type { Representation, Row } from './represent.js'

/** 200 with the body, or 304 without one; both with the validators and caching headers of the 200. */
function conditionalRead<T>(request: FastifyRequest, reply: FastifyReply, body: T, validators: Validators, maxAge: number | undefined): T | FastifyReply {
  const outcome = evaluate(request, validators)
  setValidators(reply, validators)
  allowCaching(request, reply, maxAge)
  return outcome === 'not-modified' ? reply.code(304).send() : body
}

// Reads that follow no write of theirs may be served by a read replica (db.replica).
export const listHandler = ({ collection, db, store, summary, authorize, placement, select }: HandlerContext) =>
  async function list(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    authorize(request, 'list')
    const query = request.query as RawQuery
    const exactCount = preferences(request).get('count') === 'exact'
    const plan = parseListQuery(query, collection.listSpec, exactCount)
    const selection = select(query.fields)
    const { scope, standing } = await placement(request, 'list', request.params)
    const { rows, total } = await store.list(plan, scope, db.replica, selection?.columns)
    const represent = (row: Row) => summary(row, standing(row), selection)
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
    varyByPrefer(reply)
    appendHeader(reply, 'link', link)
    // A page is its items, its total and its links: a change to any of them is a new page.
    const etag = entityTag([body, total ?? null, link])
    return conditionalRead(request, reply, bodyOf(request, reply, selection, body), { etag }, collection.options.cacheMaxAge)
  }

export const readHandler = ({ collection, db, store, detail, scopeOf, validators, authorize, standing, select }: HandlerContext) =>
  async function read(request: FastifyRequest<{ Params: Params }>, reply: FastifyReply) {
    authorize(request, 'read')
    const selection = select((request.query as RawQuery).fields)
    const row = await store.find(scopeOf(request.params), db.replica, selection?.columns)
    if (!row) throw notFound()
    const caller = await standing(request, 'read', request.params, row)
    const body = bodyOf(request, reply, selection, detail(row, caller, selection))
    return conditionalRead(request, reply, body, validators(row, caller, selection), collection.options.cacheMaxAge)
  }

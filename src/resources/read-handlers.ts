/** GET of a collection (a page, by number or by cursor) and of one item. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { notFound, type HandlerContext, type Params } from './handler-context.js'
import { cursorPage } from './list-query/cursor.js'
import { cursorLinks, pageLinks } from './list-query/links.js'
import { parseListQuery, type RawQuery } from './list-query/parse.js'

export const listHandler = ({ collection, store, summary, listScope }: HandlerContext) =>
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

export const readHandler = ({ store, detail, scopeOf }: HandlerContext) =>
  async function read(request: FastifyRequest<{ Params: Params }>) {
    const row = await store.find(scopeOf(request.params))
    if (!row) throw notFound()
    return detail(row)
  }

/** OPTIONS on any known path: 204 with `Allow` (RFC 9110 §9.3.7), and `Accept-Patch` where PATCH is served. */
import type { FastifyInstance } from 'fastify'
import { ACCEPT_PATCH } from './body-parser.js'
import { noResource } from './error-handler.js'
import type { RouteTable } from './routes.js'

export function installOptions(app: FastifyInstance, routes: RouteTable): void {
  app.options('*', async (request, reply) => {
    const allow = routes.allowFor(request.url.split('?', 1)[0]!)
    if (allow === undefined) throw noResource()
    reply.header('allow', allow)
    // RFC 5789 §3.1: advertise the patch formats where PATCH is allowed.
    if (allow.includes('PATCH')) reply.header('accept-patch', ACCEPT_PATCH)
    return reply.code(204).send()
  })
}

/** OPTIONS on any known path: 204 with `Allow` (RFC 9110 §9.3.7), and `Accept-Patch` where PATCH is served. */
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'
import { JSON_TYPES } from './body-parser.js'
import type { RouteTable } from './routes.js'

const ACCEPT_PATCH = JSON_TYPES.slice().reverse().join(', ')

export function installOptions(app: FastifyInstance, routes: RouteTable): void {
  app.options('*', async (request, reply) => {
    const allow = routes.allowFor(request.url.split('?', 1)[0]!)
    if (allow === undefined) throw new ApiError('NOT_FOUND', 'No resource exists at this path.')
    reply.header('allow', allow)
    // RFC 5789 §3.1: advertise the patch formats where PATCH is allowed.
    if (allow.includes('PATCH')) reply.header('accept-patch', ACCEPT_PATCH)
    return reply.code(204).send()
  })
}

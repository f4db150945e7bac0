/** Headers every response carries: the request id, a no-store default and the OWASP security headers. */
import type { FastifyInstance } from 'fastify'

// Computed once: the same object is applied to every reply.
const DEFAULTS = Object.freeze({
  // Nothing is cacheable unless a route says so (OWASP REST; RFC 9111 §5.2.2.5).
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
})

export function installResponseHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(DEFAULTS)
    reply.header('x-request-id', request.id)
    done()
  })
}

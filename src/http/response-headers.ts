/** Headers every response carries: the request id, a no-store default and the OWASP security headers. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

// Computed once: the same object is applied to every reply.
const DEFAULTS = Object.freeze({
  // Nothing is cacheable unless a route says so (OWASP REST; RFC 9111 §5.2.2.5).
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
})

/** The headers every response starts with, for one made without a Fastify reply (below routing). */
export const defaultHeaders = (requestId: string): Record<string, string> => ({ ...DEFAULTS, 'x-request-id': requestId })

/** The headers every response starts with; also used where Fastify answers before the hooks run. */
export function applyDefaultHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(DEFAULTS)
  reply.header('x-request-id', request.id)
}

export function installResponseHeaders(app: FastifyInstance): void {
  let closing = false
  app.addHook('onRequest', (request, reply, done) => {
    applyDefaultHeaders(request, reply)
    done()
  })
  // While the service shuts down, a response on a kept-alive connection closes it (RFC 9112 §9.6);
  // otherwise the close would wait for the client's idle timeout.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
  app.addHook('preClose', (done) => {
    closing = true
    done()
  })
}

/** Adds `value` to a list-valued header (Link, Vary) instead of replacing what is there. */
export function appendHeader(reply: FastifyReply, name: string, value: string): void {
  const existing = reply.getHeader(name)
  reply.header(name, existing === undefined || existing === '' ? value : `${String(existing)}, ${value}`)
}

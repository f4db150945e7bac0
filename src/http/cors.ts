/**
 * CORS (WHATWG Fetch, "CORS protocol") with @fastify/cors, for the origins in CORS_ORIGINS:
 * an allowed origin is echoed with credentials allowed (never `*`), a preflight is answered with
 * the methods of the path it asks about; any other origin gets no CORS header at all.
 */
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import { requestPath } from './request-target.js'
import type { RouteTable } from './routes.js'
import type { Versions } from './versioning.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by @fastify/cors on an OPTIONS from an allowed origin; its catch-all OPTIONS route answers only those. */
    corsPreflightEnabled: boolean
  }
}

/** Response headers a browser script may read besides the safelisted ones. */
export const EXPOSED_HEADERS = [
  'ETag', 'Last-Modified', 'Location', 'Content-Location', 'Link', 'X-Total-Count', 'X-Request-Id',
  'Retry-After', 'Deprecation', 'Sunset', 'RateLimit', 'RateLimit-Policy', 'Idempotent-Replayed',
]
/** Request headers a browser may send; Authorization by name, as `*` never covers it. */
export const ALLOWED_HEADERS = [
  'Content-Type', 'Authorization', 'If-Match', 'If-None-Match', 'If-Modified-Since', 'If-Unmodified-Since', 'X-Request-Id',
  'Idempotency-Key',
]
/** How long a browser may reuse a preflight, in seconds (Chromium caps it at 7,200). */
export const PREFLIGHT_MAX_AGE = 600

export async function installCors(app: FastifyInstance, origins: readonly string[], routes: RouteTable, versions: Versions): Promise<void> {
  const allowed = new Set(origins)
  // An unversioned path (served by the version Accept names) offers the current version's methods.
  const methodsOf = (path: string) => routes.allowFor(path) ?? routes.allowFor(versions.canonical(path) ?? path) ?? ''
  // Fixed options, not a delegator: a delegator's options are built and normalised again on every
  // request, most of which send no Origin at all (docs/performance.md).
  await app.register(cors, {
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    credentials: true,
    exposedHeaders: EXPOSED_HEADERS.join(', '),
    allowedHeaders: ALLOWED_HEADERS.join(', '),
    maxAge: PREFLIGHT_MAX_AGE,
    strictPreflight: false,
    // The preflight is answered below, with the methods of the path it asks about.
    preflightContinue: true,
  })
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.corsPreflightEnabled) return done()
    if (request.headers['access-control-request-method'] === undefined) {
      // An OPTIONS without Access-Control-Request-Method is not a preflight: it gets `Allow`
      // (src/http/error-handler.ts), with no preflight headers.
      request.corsPreflightEnabled = false
      reply.removeHeader('access-control-allow-methods').removeHeader('access-control-allow-headers').removeHeader('access-control-max-age')
      return done()
    }
    // The methods of this path only: a preflight for one it lacks fails in the browser.
    reply.code(204).header('access-control-allow-methods', methodsOf(requestPath(request))).header('content-length', '0').send()
  })
}

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
  const exposedHeaders = EXPOSED_HEADERS.join(', ')
  const allowedHeaders = ALLOWED_HEADERS.join(', ')
  // An unversioned path (served by the version Accept names) offers the current version's methods.
  const methodsOf = (path: string) => routes.allowFor(path) ?? routes.allowFor(versions.canonical(path) ?? path) ?? ''
  await app.register(cors, {
    delegator(request, callback) {
      const origin = request.headers.origin
      if (origin === undefined || !allowed.has(origin)) return callback(null, { origin: false })
      const preflight = request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined
      callback(null, {
        origin,
        credentials: true,
        exposedHeaders,
        allowedHeaders,
        maxAge: PREFLIGHT_MAX_AGE,
        // The methods of this path only: a preflight for one it lacks fails in the browser.
        methods: preflight ? methodsOf(requestPath(request)) : '',
        // An OPTIONS without Access-Control-Request-Method is not a preflight: it gets `Allow`.
        preflight,
        strictPreflight: false,
      })
    },
  })
}

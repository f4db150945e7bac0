/**
 * Cross-site request forgery (OWASP CSRF Prevention): a cookie rides along with any request a
 * browser sends, so an unsafe request authenticated by the session cookie must come from the
 * service's own origin or one in CORS_ORIGINS. Bearer tokens are not sent by browsers on their
 * own, so they need no such check.
 */
import type { FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { SAFE_METHODS } from '../http/methods.js'


/** The origin of a URL, or undefined when it is not one (`null`, garbage). */
function originOf(value: string): string | undefined {
  try {
    const origin = new URL(value).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

/**
 * Throws 403 when a cookie-authenticated unsafe request comes from another site. The request's
 * origin is its Origin header, else its Referer's; a request with neither did not come from a
 * browser page (browsers send Origin on every unsafe request) and passes.
 */
export function checkSameSite(request: FastifyRequest, allowed: ReadonlySet<string>): void {
  if (SAFE_METHODS.has(request.method)) return
  const claimed = request.headers.origin ?? request.headers.referer
  if (claimed === undefined) return
  const origin = originOf(claimed)
  const own = `${request.protocol}://${request.host}`
  if (origin !== undefined && (origin === own || allowed.has(origin))) return
  throw new ApiError('FORBIDDEN', 'A request signed in with a cookie must come from this site or an origin in CORS_ORIGINS.')
}

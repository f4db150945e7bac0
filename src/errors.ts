/**
 * ApiError, the one catalogue of error codes, and the errors several layers raise alike;
 * docs/errors.md lists the same codes (a test keeps them equal).
 */

/** One problem with one field of the request: the spec's `details[]` entry. */
export interface ErrorDetail {
  field: string
  reason: string
}

interface CatalogueEntry {
  readonly status: number
  readonly message: string
}

/**
 * Every error the service can answer with. A published code is never renamed or reused;
 * `message` is the default, a throw site may give a more precise one.
 */
export const CATALOGUE = Object.freeze({
  BAD_REQUEST: { status: 400, message: 'The request could not be read.' },
  MALFORMED_JSON: { status: 400, message: 'The request body is not valid JSON.' },
  INVALID_PARAMETER: { status: 400, message: 'A query parameter is not valid.' },
  TOO_MANY_AFFECTED: { status: 400, message: 'The change would affect more items than Prefer: max-affected allows; nothing was changed.' },
  TOO_MANY_GROUPS: { status: 400, message: 'The aggregate has more groups than one answer holds; group by fewer fields or filter the items.' },
  EXPORT_TOO_LARGE: { status: 400, message: 'More items match than one export may have (EXPORT_MAX_ROWS); narrow it with filters.' },
  UNAUTHENTICATED: { status: 401, message: 'Credentials are missing or not valid.' },
  FORBIDDEN: { status: 403, message: 'You are not allowed to do this.' },
  NOT_FOUND: { status: 404, message: 'The resource does not exist.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'The method is not allowed on this resource.' },
  NOT_ACCEPTABLE: { status: 406, message: 'The resource can only be sent as JSON; the Accept header admits no JSON type.' },
  REQUEST_TIMEOUT: { status: 408, message: 'The request was not received in time.' },
  CONFLICT: { status: 409, message: 'The request conflicts with the current state of the resource.' },
  INVALID_TRANSITION: { status: 409, message: 'The state cannot move that way.' },
  STATE_CONFLICT: { status: 409, message: "The item's state does not allow this change." },
  IDEMPOTENCY_KEY_IN_USE: { status: 409, message: 'A request with this Idempotency-Key is still being processed; retry later.' },
  PRECONDITION_FAILED: { status: 412, message: 'A precondition of the request failed: the item has changed.' },
  EVENTS_EXPIRED: { status: 410, message: 'Events after this one are no longer kept; read the items again, then follow the feed from its end.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large.' },
  URI_TOO_LONG: { status: 414, message: 'The request target is too long.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'The request body must be JSON.' },
  EXPECTATION_FAILED: { status: 417, message: 'The Expect header asks for something this service does not do.' },
  VALIDATION_ERROR: { status: 422, message: 'The request body is not valid.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'This Idempotency-Key was used with another request.' },
  FAILED_DEPENDENCY: { status: 424, message: 'An operation this one depends on failed.' },
  PRECONDITION_REQUIRED: { status: 428, message: 'This change needs an If-Match header with the item\'s current ETag.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests; try again later.' },
  HEADERS_TOO_LARGE: { status: 431, message: 'The request headers are too large.' },
  INTERNAL_ERROR: { status: 500, message: 'An unexpected error occurred.' },
  NOT_IMPLEMENTED: { status: 501, message: 'The method is not implemented by this service.' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'The service is temporarily unavailable; try again later.' },
} satisfies Record<string, CatalogueEntry>)

export type ErrorCode = keyof typeof CATALOGUE

export interface ApiErrorOptions {
  /** Logged with the request id, never rendered. */
  cause?: unknown
  /** Extra response headers, such as `Allow` on a 405 or `Retry-After` on a 503. */
  headers?: Record<string, string>
}

/** The only error type the service throws on purpose; the error handler renders it as the spec's body. */
/**
 * The most `details` an error body lists: a body of 1 MB can break thousands of rules at once, and
 * its error should not be larger than the request. The first ones are kept.
 */
export const MAX_DETAILS = 100

export class ApiError extends Error {
  readonly status: number
  readonly code: ErrorCode
  readonly details: ErrorDetail[]
  readonly headers: Record<string, string> | undefined

  constructor(code: ErrorCode, message?: string, details: ErrorDetail[] = [], options: ApiErrorOptions = {}) {
    const entry = CATALOGUE[code]
    super(message ?? entry.message, { cause: options.cause })
    this.name = 'ApiError'
    this.status = entry.status
    this.code = code
    this.details = details.length > MAX_DETAILS ? details.slice(0, MAX_DETAILS) : details
    this.headers = options.headers
  }
}

export const isApiError = (error: unknown): error is ApiError => error instanceof ApiError

/** 404 for a path that names no resource: no route takes it. */
export const noResource = () => new ApiError('NOT_FOUND', 'No resource exists at this path.')

/** 401 for an action that needs credentials (RFC 9110 §11.6.1: with a challenge). */
export function unauthenticated(message = 'Sign in, or send a bearer token, to do this.'): ApiError {
  return new ApiError('UNAUTHENTICATED', message, [], { headers: { 'www-authenticate': 'Bearer realm="api"' } })
}

/** A bearer token was sent and cannot be used (RFC 6750 §3.1). */
export function invalidToken(message: string): ApiError {
  return new ApiError('UNAUTHENTICATED', message, [], { headers: { 'www-authenticate': 'Bearer realm="api", error="invalid_token"' } })
}

/**
 * `error` as part `prefix` of the request's (an array's item `[3]`, a batch's `operations[2]`):
 * its details' fields prefixed with it, or, without details, one naming it; its message too.
 */
export function within(prefix: string, error: unknown): unknown {
  if (!(error instanceof ApiError)) return error
  const details: ErrorDetail[] = error.details.length > 0 ? error.details.map((d) => ({ field: `${prefix}.${d.field}`, reason: d.reason })) : [{ field: prefix, reason: error.message }]
  return new ApiError(error.code, `${prefix}: ${error.message}`, details, { headers: error.headers, cause: error })
}

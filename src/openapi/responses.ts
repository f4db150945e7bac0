/**
 * The parts of route schemas that only describe (OpenAPI): the error body, the response headers
 * the service sets, and the error answers each kind of route can give. Route schemas use these
 * beside the schemas that validate and serialize, so the document is built from the same routes.
 */
import { Type, type TSchema } from 'typebox'
import { CATALOGUE, MAX_DETAILS, type ErrorCode } from '../errors.js'

/** `$id` of the error body, a shared schema of every version's document (`#/components/schemas/Error`). */
export const ERROR_SCHEMA_ID = 'Error'

/** The uniform error body (docs/errors.md). Registered once at the root: every version shares it. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(CATALOGUE), description: 'A stable code from the catalogue; never renamed or reused.' }),
        message: Type.String({ description: 'For people: what went wrong and what to do.' }),
        details: Type.Array(Type.Object({ field: Type.String(), reason: Type.String() }, { additionalProperties: false }), {
          maxItems: MAX_DETAILS,
          description: `One entry per field or parameter at fault (the first ${MAX_DETAILS}); empty when there is none.`,
        }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: ERROR_SCHEMA_ID, additionalProperties: false, description: 'The body of every error answer.' },
)

const header = (description: string, schema: TSchema = Type.String()) => ({ ...schema, description })

/**
 * Response headers, by name as the specifications spell them (the service sends them in lower
 * case; names are case-insensitive, but linters and generators compare them as written).
 */
export const HEADERS = {
  ETag: header("The representation's entity tag, for If-None-Match and If-Match."),
  'Last-Modified': header("When the item last changed, for If-Modified-Since and If-Unmodified-Since."),
  Location: header('The URL of the created item.'),
  'Content-Location': header('The URL of the item: the body is its representation as it is now (RFC 9110 §8.7).'),
  'Set-Cookie': header('The session cookie (HttpOnly, SameSite=Lax, Path=/api): set on sign-in, cleared (expired) on sign-out.'),
  Link: header('Paging links (first, prev, next, last) and, on a deprecated version, the same resource in the successor version (rel="successor-version").'),
  'X-Total-Count': header('How many items match, when at most COUNT_LIMIT do or the count is exact.', Type.String({ pattern: '^[0-9]+$' })),
  'Preference-Applied': header('`count=exact` when the total was counted in full as Prefer asked.'),
  RateLimit: header('What is left of the quota and when it refills (draft-ietf-httpapi-ratelimit-headers).'),
  'RateLimit-Policy': header('The quota and its window.'),
  'Retry-After': header('Seconds to wait before trying again (a 409: until the request with the same Idempotency-Key may have finished).', Type.String({ pattern: '^[0-9]+$' })),
  Deprecation: header('On a deprecated version: when it was deprecated (RFC 9745).'),
  Sunset: header('On a deprecated version: when it stops being served (RFC 8594).'),
  Allow: header('The methods the resource supports.'),
  'Accept-Patch': header('The media types a PATCH takes (RFC 5789 §3.1).'),
  'WWW-Authenticate': header('The authentication challenge (RFC 6750).'),
  'Idempotent-Replayed': header('`true` when this answer replays the first answer to the same Idempotency-Key.'),
  'Content-Disposition': header('On an export: `attachment` with a file name, such as `attachment; filename="products.csv"`.'),
} as const

type HeaderName = keyof typeof HEADERS
/** A header an answer always carries (`ETag`), or may carry (`Link?`). */
export type HeaderUse = HeaderName | `${HeaderName}?`

/**
 * Marks a header the answer always carries. @fastify/swagger copies a response header's schema
 * as it is and has no `required`; the document's finishing pass (conventions.ts) moves this mark
 * to the header object, where OpenAPI has it.
 */
export const REQUIRED_HEADER = 'x-required'

/** The headers any answer may carry: a rate limit's (when one is set); a deprecated version's are added with the version. */
const EVERY_ANSWER: readonly HeaderUse[] = ['RateLimit?', 'RateLimit-Policy?']

function headersOf(uses: readonly HeaderUse[]): Record<string, object> {
  return Object.fromEntries(
    [...EVERY_ANSWER, ...uses].map((use) => {
      const name = use.replace(/\?$/, '') as HeaderName
      return [name, use.endsWith('?') ? HEADERS[name] : { ...HEADERS[name], [REQUIRED_HEADER]: true }]
    }),
  )
}

/** A success answer: `schema` with its description and the headers it carries. */
export function success(description: string, schema: TSchema, headers: readonly HeaderUse[] = []): TSchema {
  return { ...schema, description, headers: headersOf(headers) } as TSchema
}

/** An answer with no body (204, 304): `type: 'null'` tells the document so. */
export function noBody(description: string, headers: readonly HeaderUse[] = []): TSchema {
  return { type: 'null', description, headers: headersOf(headers) } as unknown as TSchema
}

/** Why a route answers with a status, when the catalogue's own message is not specific enough. */
const STATUS_DESCRIPTIONS: Record<number, string> = {
  400: 'The request could not be read, or a parameter is not valid.',
  401: 'Credentials are missing, or the ones sent are not valid.',
  403: 'The caller may not do this: a role or token scope it lacks, or a session cookie sent from another site.',
  404: 'Nothing exists at this path, or the caller may not see it.',
  406: 'The Accept header admits no JSON type, or names a version that does not exist.',
  409: 'The request conflicts with the current state: a duplicate value, a state move, an Idempotency-Key in use (with Retry-After).',
  410: 'What was asked for is no longer kept.',
  408: 'The request body did not all arrive in time; the connection is closed.',
  412: 'A precondition (If-Match, If-Unmodified-Since) failed: the item has changed.',
  413: 'The body is over 1 MiB: refused before it is read, whatever the method.',
  414: 'The request target (path and query) is over 8 KiB: refused before it reaches the API, so without the headers the API sets (rate limits, a deprecated version\'s notice).',
  415: 'The body is not JSON.',
  422: 'The body is JSON but not valid for this resource.',
  428: 'This change needs If-Match.',
  429: 'Too many requests.',
  500: 'An unexpected error.',
  503: 'The service cannot answer now (the database is unavailable or slow).',
}

/** Statuses any route can answer, whatever it does: 414 for any target, before routing (BEFORE_ROUTING). */
const EVERY_ROUTE = [400, 401, 406, 414, 429, 500, 503] as const
/**
 * Statuses of any unsafe method: a session cookie sent from another site or a token without the
 * `write` scope (403); a body too large (413) or too slow (408), whatever the route does with it:
 * Fastify reads a body sent with any of these methods, a DELETE's too.
 */
const UNSAFE = [403, 408, 413] as const
/** Statuses of any route that reads a body. */
const WITH_BODY = [415, 422] as const

/**
 * Statuses the HTTP server answers before a request reaches Fastify (http/server-factory.ts): no
 * hook has run, so a deprecated version's Deprecation and Sunset are not on them.
 */
export const BEFORE_ROUTING: ReadonlySet<number> = new Set([414])

/**
 * Headers an error answer of a status carries: always, or (`?`) for some causes: a 403 for a
 * token's missing scope (RFC 6750 §3.1), a 409 for an Idempotency-Key still in use, a PATCH's 415.
 */
const ERROR_HEADERS: Partial<Record<number, HeaderUse[]>> = {
  401: ['WWW-Authenticate'],
  403: ['WWW-Authenticate?'],
  409: ['Retry-After?'],
  415: ['Accept-Patch?'],
  429: ['Retry-After'],
  503: ['Retry-After'],
}

/**
 * The error answers of a route: those of every route, of an unsafe method and of a body if it
 * is one or reads one, and `statuses`. Each status has one description and headers, whatever the
 * route: the document shares them as `#/components/responses/...`.
 */
export function errors(statuses: readonly number[], { unsafe = false, body = false } = {}): Record<number, TSchema> {
  const all = new Set<number>([...EVERY_ROUTE, ...(unsafe ? UNSAFE : []), ...(body ? WITH_BODY : []), ...statuses])
  return Object.fromEntries(
    [...all]
      .sort((a, b) => a - b)
      .map((status) => [
        status,
        {
          ...Type.Ref(ERROR_SCHEMA_ID),
          description: STATUS_DESCRIPTIONS[status] ?? messageOf(status),
          headers: BEFORE_ROUTING.has(status) ? {} : headersOf(ERROR_HEADERS[status] ?? []),
        } as unknown as TSchema,
      ]),
  )
}

const messageOf = (status: number) => Object.values(CATALOGUE).find((entry) => entry.status === status)?.message ?? 'An error.'

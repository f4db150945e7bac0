/** Reads JSON request bodies: empty, broken or non-object bodies are 400s with a clear message. */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'

/** Largest request body, in bytes; more is a 413 before the body is read to its end. */
export const BODY_LIMIT = 1024 * 1024

const JSON_TYPE = 'application/json'
/** RFC 7396 merge patches, accepted by PATCH only. */
const MERGE_PATCH_TYPE = 'application/merge-patch+json'

/** Media types read as JSON. */
export const JSON_TYPES = [JSON_TYPE, MERGE_PATCH_TYPE]

/** Methods whose body is read; content sent with any other (GET, DELETE) is ignored (RFC 9110 §9.3.1, §9.3.5). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/**
 * A body must be one JSON object. `JSON.parse` (not a reviver or a merge) keeps `__proto__`
 * and `constructor` as plain own keys, which validation then rejects as unknown fields.
 */
export function parseJsonObject(text: string): Record<string, unknown> {
  if (text.trim() === '') throw new ApiError('MALFORMED_JSON', 'The request body is empty; send a JSON object.')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message.replace(/^JSON\.parse: /, '') : 'unreadable'
    throw new ApiError('MALFORMED_JSON', `The request body is not valid JSON: ${reason}.`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('BAD_REQUEST', 'The request body must be a JSON object.')
  }
  return value as Record<string, unknown>
}

const unsupported = (request: FastifyRequest) =>
  new ApiError(
    'UNSUPPORTED_MEDIA_TYPE',
    request.method === 'PATCH'
      ? `Send the body as ${MERGE_PATCH_TYPE} or ${JSON_TYPE}.`
      : `Send the body as ${JSON_TYPE}.`,
  )

/** preValidation hook of routes that need a body: a request without one is unreadable. */
export async function requireBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) throw new ApiError('BAD_REQUEST', 'The request needs a JSON object body.')
}

export function installBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string', bodyLimit: BODY_LIMIT }, (request, body, done) => {
    if (!BODY_METHODS.has(request.method)) return done(null, undefined)
    if (request.headers['content-type']?.toLowerCase().startsWith(MERGE_PATCH_TYPE) && request.method !== 'PATCH') {
      return done(unsupported(request), undefined)
    }
    try {
      done(null, parseJsonObject(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
  // Every other media type: ignored where bodies are, refused where they are read.
  app.addContentTypeParser('*', (request, _payload, done) => {
    if (!BODY_METHODS.has(request.method)) return done(null, undefined)
    done(unsupported(request), undefined)
  })
}

/** Reads JSON request bodies: empty, broken or non-object bodies are 400s with a clear message. */
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'

/** Largest request body, in bytes; more is a 413 before the body is read to its end. */
export const BODY_LIMIT = 1024 * 1024

/** Media types read as JSON: RFC 7396 merge patches are JSON objects too. */
export const JSON_TYPES = ['application/json', 'application/merge-patch+json']

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

export function installBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers()
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => {
    try {
      done(null, parseJsonObject(body as string))
    } catch (error) {
      done(error as Error, undefined)
    }
  })
}

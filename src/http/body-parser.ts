/** Reads JSON request bodies: empty, broken or non-object bodies are 400s with a clear message. */
import type { FastifyBodyParser, FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { MAX_JSON_DEPTH, structureProblem } from './json-structure.js'
import { CSV_MEDIA_TYPE } from './csv.js'
import { VENDOR_BODY_TYPE } from './negotiation.js'

/** Largest request body, in bytes; more is a 413 before the body is read to its end. */
export const BODY_LIMIT = 1024 * 1024

const JSON_TYPE = 'application/json'
/** RFC 7396 merge patches, accepted by PATCH only. */
const MERGE_PATCH_TYPE = 'application/merge-patch+json'

/** Media types read as JSON; this API's vendor types are JSON too (RFC 6839 §3.1). */
export const JSON_TYPES = [JSON_TYPE, MERGE_PATCH_TYPE]

/** Methods whose body is read; content sent with any other (GET, DELETE) is ignored (RFC 9110 §9.3.1, §9.3.5). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/** RFC 9110 §8.3.1: `type "/" subtype`, as Fastify checks a Content-Type before any parser runs (else 415). */
const MEDIA_TYPE = /^\s*[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+\s*(;|$)/

/** RFC 5789 §3.1: the patch formats PATCH accepts, sent with OPTIONS and with a 415 to a PATCH. */
export const ACCEPT_PATCH = `${MERGE_PATCH_TYPE}, ${JSON_TYPE}`

/** Strings PostgreSQL cannot store (U+0000) or that are not Unicode text (lone surrogates, RFC 8259 §8.2). */
const SUSPECT_ESCAPE = /\\u(0000|[dD][89a-fA-F])/i
const decoder = new TextDecoder('utf-8', { fatal: true })

/** Newline-delimited JSON: one JSON object per line. */
export const NDJSON_MEDIA_TYPE = 'application/x-ndjson'

/** The media types an import reads (a collection's POST): each into the array of items a JSON body would be. */
export const IMPORT_TYPES = [CSV_MEDIA_TYPE, NDJSON_MEDIA_TYPE] as const
export type ImportType = (typeof IMPORT_TYPES)[number]

/** Items read from an import's body, each with the line of the body it starts on. */
export interface Imported {
  items: Record<string, unknown>[]
  lines: number[]
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes a JSON array of items too (a collection's POST: DESIGN "Writing many"). */
    arrayBody?: boolean
    /** The route takes CSV and NDJSON bodies too, read by this into items (src/resources/import/). */
    imports?: (text: string, type: ImportType) => Imported
  }
  interface FastifyRequest {
    /** An import's items' lines in its body, by item: an error about item [i] names its line. */
    importedLines?: readonly number[]
  }
}

/**
 * A body must be one JSON object, or where `arrays` (a collection's POST), an array of them.
 * `JSON.parse` (not a reviver or a merge) keeps `__proto__` and `constructor` as plain own keys,
 * which validation then rejects as unknown fields.
 */
export function parseJsonBody(bytes: Buffer, arrays = false): Record<string, unknown> | unknown[] {
  return parseJsonText(decodeUtf8(bytes), arrays)
}

/** The body's text: UTF-8, else a 400 (`code`: MALFORMED_JSON for JSON, BAD_REQUEST for what is not). */
function decodeUtf8(bytes: Buffer, code: 'MALFORMED_JSON' | 'BAD_REQUEST' = 'MALFORMED_JSON'): string {
  try {
    return decoder.decode(bytes)
  } catch {
    throw new ApiError(code, 'The request body is not valid UTF-8.')
  }
}

/** One JSON object (or, where `arrays`, an array of them) from its text: parseJsonBody's checks, on an NDJSON line too. */
export function parseJsonText(text: string, arrays = false): Record<string, unknown> | unknown[] {
  if (text.trim() === '') throw new ApiError('MALFORMED_JSON', 'The request body is empty; send a JSON object.')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    const reason = error instanceof SyntaxError ? error.message.replace(/^JSON\.parse: /, '') : 'unreadable'
    throw new ApiError('MALFORMED_JSON', `The request body is not valid JSON: ${reason}.`)
  }
  if (typeof value !== 'object' || value === null || (Array.isArray(value) && !arrays)) {
    throw new ApiError('BAD_REQUEST', `The request body must be a JSON object${arrays ? ', or an array of them' : ''}.`)
  }
  const problem = structureProblem(text)
  if (problem?.kind === 'too-deep') throw new ApiError('MALFORMED_JSON', `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`)
  // RFC 8259 §4, RFC 7493 §2.3: a name given twice is ambiguous; refuse it rather than keep the last.
  if (problem) throw new ApiError('MALFORMED_JSON', `The request body gives the key ${JSON.stringify(problem.key)} twice.`)
  // Only bodies that escape such a character pay for the walk, whose depth is bounded above.
  if (SUSPECT_ESCAPE.test(text) && !textIsStorable(value)) {
    throw new ApiError('MALFORMED_JSON', 'The request body has a string with U+0000 or an unpaired surrogate.')
  }
  return value as Record<string, unknown> | unknown[]
}

function textIsStorable(value: unknown): boolean {
  if (typeof value === 'string') return !value.includes('\u0000') && value.isWellFormed()
  if (typeof value !== 'object' || value === null) return true
  return Object.entries(value).every(([key, item]) => textIsStorable(key) && textIsStorable(item))
}

const unsupported = (request: FastifyRequest) =>
  request.method === 'PATCH'
    ? new ApiError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${MERGE_PATCH_TYPE} or ${JSON_TYPE}.`, [], { headers: { 'accept-patch': ACCEPT_PATCH } })
    : request.routeOptions.config.imports
      ? new ApiError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${JSON_TYPE}, or to import items as ${IMPORT_TYPES.join(' or ')} (UTF-8).`)
      : new ApiError('UNSUPPORTED_MEDIA_TYPE', `Send the body as ${JSON_TYPE} (UTF-8).`)

/** JSON is UTF-8 (RFC 8259 §8.1): a charset parameter may only say so. */
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i

/** Whether a body of this request is read at all: unknown routes and body-less methods skip it. */
const readsBody = (request: FastifyRequest) => BODY_METHODS.has(request.method) && !request.is404

/** preValidation hook of routes that need a body: a request without one is unreadable. */
export async function requireBody(request: FastifyRequest): Promise<void> {
  if (request.body === undefined) throw new ApiError('BAD_REQUEST', 'The request needs a JSON object body.')
}

export function installBodyParser(app: FastifyInstance): void {
  // Content sent with a method that reads none is ignored (RFC 9110 §9.3.5), under a Content-Type
  // that is no media type at all too, which Fastify would refuse with a 415 before any parser:
  // such content goes to the catch-all parser below, as any other type's does.
  app.addHook('onRequest', (request, _reply, done) => {
    const type = request.headers['content-type']
    if (type !== undefined && !BODY_METHODS.has(request.method) && !MEDIA_TYPE.test(type)) request.headers['content-type'] = 'application/octet-stream'
    done()
  })
  app.removeAllContentTypeParsers()
  const parseJson: FastifyBodyParser<Buffer> = (request, body, done) => {
    if (!readsBody(request)) return done(null, undefined)
    const type = request.headers['content-type']!.toLowerCase()
    const charset = CHARSET.exec(type)?.[1]
    if ((type.startsWith(MERGE_PATCH_TYPE) && request.method !== 'PATCH') || (charset && charset !== 'utf-8' && charset !== 'utf8')) {
      return done(unsupported(request), undefined)
    }
    const named = VENDOR_BODY_TYPE.exec(type)
    if (named && !request.url.startsWith(`/api/v${named[1]}/`)) {
      return done(new ApiError('UNSUPPORTED_MEDIA_TYPE', `The body is sent as version ${named[1]}, but this path serves another version.`), undefined)
    }
    try {
      done(null, parseJsonBody(body, request.routeOptions.config.arrayBody === true && request.method === 'POST'))
    } catch (error) {
      done(error as Error, undefined)
    }
  }
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, parseJson)
  app.addContentTypeParser(VENDOR_BODY_TYPE, { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, parseJson)
  // CSV and NDJSON: on a route that imports them (a collection's POST), else refused as any other type.
  const parseImport: FastifyBodyParser<Buffer> = (request, body, done) => {
    if (!readsBody(request)) return done(null, undefined)
    const imports = request.routeOptions.config.imports
    const type = request.headers['content-type']!.toLowerCase()
    const charset = CHARSET.exec(type)?.[1]
    if (!imports || request.method !== 'POST' || (charset && charset !== 'utf-8' && charset !== 'utf8')) return done(unsupported(request), undefined)
    try {
      // Spreadsheets write a byte order mark first; it is no part of the first field.
      const text = decodeUtf8(body, 'BAD_REQUEST').replace(/^\uFEFF/, '')
      const imported = imports(text, type.startsWith(CSV_MEDIA_TYPE) ? CSV_MEDIA_TYPE : NDJSON_MEDIA_TYPE)
      request.importedLines = imported.lines
      done(null, imported.items)
    } catch (error) {
      done(error as Error, undefined)
    }
  }
  app.addContentTypeParser([...IMPORT_TYPES], { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, parseImport)
  // Every other media type: ignored where bodies are, refused where they are read.
  app.addContentTypeParser('*', (request, _payload, done) => {
    if (!readsBody(request)) return done(null, undefined)
    done(unsupported(request), undefined)
  })
}

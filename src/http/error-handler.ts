/** The one place that renders errors: every failure becomes the spec's `{"error": {...}}` body. */
import { randomUUID } from 'node:crypto'
import { STATUS_CODES as REASON_PHRASES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, isApiError, noResource, type ErrorCode } from '../errors.js'
import { ACCEPT_PATCH } from './body-parser.js'
import { requestPath } from './request-target.js'
import { appendHeader, applyDefaultHeaders, defaultHeaders } from './response-headers.js'
import type { RouteTable } from './routes.js'
import type { Versions } from './versioning.js'
import { validationDetails, type SchemaError } from './validation.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A collection route's fields the server sets: sending one is "read-only" rather than "unknown". */
    readOnlyFields?: ReadonlySet<string>
  }
}

/** Fastify's own errors, by code, to catalogue codes. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'MALFORMED_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON',
}

const STATUS_CODES: Record<number, ErrorCode> = {
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  431: 'HEADERS_TOO_LARGE',
  503: 'SERVICE_UNAVAILABLE',
}

/** Any thrown value as an ApiError; what cannot be explained is a 500 whose cause is only logged. */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (isApiError(error)) return error
  const fastifyError = error as Partial<FastifyError>
  if (fastifyError.validation) {
    const errors = fastifyError.validation as SchemaError[]
    const details = validationDetails(errors, request.routeOptions.config.readOnlyFields ?? new Set())
    if (fastifyError.validationContext === 'body') return new ApiError('VALIDATION_ERROR', undefined, details)
    return new ApiError('INVALID_PARAMETER', undefined, details)
  }
  const mapped = FASTIFY_CODES[fastifyError.code ?? '']
  if (mapped) return new ApiError(mapped, undefined, [], { cause: error })
  const status = fastifyError.statusCode ?? 500
  if (status >= 400 && status < 500) return new ApiError(STATUS_CODES[status] ?? 'BAD_REQUEST', undefined, [], { cause: error })
  return new ApiError('INTERNAL_ERROR', undefined, [], { cause: error })
}

/** The spec's error body. */
export const errorBody = (error: ApiError) => ({ error: { code: error.code, message: error.message, details: error.details } })

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  // An error is no representation of the resource: nothing a read or write set for one stays.
  reply.removeHeader('etag').removeHeader('last-modified').removeHeader('content-location').header('cache-control', 'no-store')
  if (error.headers) reply.headers(error.headers)
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(errorBody(error))
}

/**
 * Installs the error handler and what answers requests no route takes: OPTIONS on a known path
 * (204 with `Allow`, RFC 9110 §9.3.7), 405 for another method there, redirects to canonical API
 * paths, and 404.
 */
export function installErrorHandling(app: FastifyInstance, routes: RouteTable, versions: Versions): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error, request)
    if (apiError.status >= 500) request.log.error({ err: apiError.cause ?? error, code: apiError.code }, 'request failed')
    else if (apiError.cause) request.log.debug({ err: apiError.cause, code: apiError.code }, 'request rejected')
    return sendError(reply, apiError)
  })
  app.setNotFoundHandler((request, reply) => {
    const allow = routes.allowFor(requestPath(request))
    if (allow === undefined) {
      const unrouted = versions.unrouted(request, routes)
      if (unrouted instanceof ApiError) return sendError(reply, unrouted)
      // Which version an unversioned path serves depends on Accept.
      if (unrouted) {
        appendHeader(reply, 'vary', 'Accept')
        return reply.code(302).header('location', unrouted.location).send()
      }
      return sendError(reply, noResource())
    }
    if (request.method === 'OPTIONS') {
      reply.header('allow', allow)
      // RFC 5789 §3.1: advertise the patch formats where PATCH is allowed.
      if (allow.includes('PATCH')) reply.header('accept-patch', ACCEPT_PATCH)
      return reply.code(204).send()
    }
    const message = `${request.method} is not allowed here; allowed: ${allow}.`
    return sendError(reply, new ApiError('METHOD_NOT_ALLOWED', message, [], { headers: { allow } }))
  })
}

/**
 * Fastify's `frameworkErrors`: failures before routing, such as a path with broken percent-encoding
 * (`/products/%zz`), which can name no resource: 404 with the uniform body and the usual headers.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  applyDefaultHeaders(request, reply)
  sendError(reply, error.code === 'FST_ERR_BAD_URL' ? noResource() : toApiError(error, request))
}

/** The longest request target (path and query) served; a longer one is 414 (RFC 9110 §15.5.15). */
export const MAX_TARGET_LENGTH = 8 * 1024

/** A response Fastify does not make, as status, header fields and body. */
export interface RawResponse {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * An error answered below Fastify's routing (Node's parser, its timeouts, CONNECT, Expect, a
 * missing Host): the uniform body with the headers every response has. The connection is closed:
 * what follows on it cannot be trusted to start a new request (RFC 9112 §9.6).
 */
export function rawErrorResponse(error: ApiError, id: string = randomUUID()): RawResponse {
  const body = JSON.stringify(errorBody(error))
  const headers = {
    ...defaultHeaders(id),
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    // RFC 9110 §6.6.1: an origin server with a clock sends Date.
    date: new Date().toUTCString(),
    connection: 'close',
    ...error.headers,
  }
  return { status: error.status, headers, body }
}

/** The bytes of a RawResponse, for a socket that has no response object. */
export function rawResponseBytes({ status, headers, body }: RawResponse): string {
  const fields = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  return `HTTP/1.1 ${status} ${REASON_PHRASES[status]}\r\n${fields.join('')}\r\n${body}`
}

/** Node's clientError argument; Fastify types its `rawPacket` wrongly (it is a Buffer). */
type ClientError = Error & { code?: string; rawPacket?: unknown }

/** Node's clientError codes with an answer of their own; any other is an unreadable request. */
const CLIENT_ERROR_CODES: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
  // The server's headersTimeout or requestTimeout passed (server-factory.ts).
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
}

export const uriTooLong = () => new ApiError('URI_TOO_LONG', `The request target (path and query) is longer than ${MAX_TARGET_LENGTH} bytes.`)

/**
 * Whether a header overflow is a request line too long: the read that overflowed starts with a
 * method and a target over MAX_TARGET_LENGTH. Measured on loopback, a request written at once is
 * one read (a 17 KB target: a 17,029-byte rawPacket); when it came in several reads, only the last
 * is kept, the request line may be gone, and the answer stays 431.
 */
function requestLineTooLong(rawPacket: unknown): boolean {
  if (!Buffer.isBuffer(rawPacket)) return false
  const start = rawPacket.subarray(0, MAX_TARGET_LENGTH + 64).toString('latin1')
  const target = /^[A-Z]+ (\S*)/.exec(start)?.[1] ?? ''
  return target.length > MAX_TARGET_LENGTH
}

function clientError(error: ClientError): ApiError {
  if (error.code === 'HPE_HEADER_OVERFLOW' && requestLineTooLong(error.rawPacket)) return uriTooLong()
  return new ApiError(CLIENT_ERROR_CODES[error.code ?? ''] ?? 'BAD_REQUEST')
}

/** Whether a response on this socket has begun: bytes written after it would corrupt it (Node's socketOnError checks the same). */
const responseStarted = (socket: Socket) => (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage?.headersSent === true

/**
 * Requests Node's parser rejects, or that its timeouts end, before Fastify sees them still get
 * the uniform body. There is no request, so the request id is a new one.
 */
export function clientErrorHandler(error: ClientError, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable || responseStarted(socket)) return void socket.destroy(error)
  socket.end(rawResponseBytes(rawErrorResponse(clientError(error))))
}

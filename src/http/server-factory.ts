/** The HTTP server under Fastify: how long a client may take to send a request, and the answers made before routing. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import type { FastifyServerFactory } from 'fastify'
import { ApiError } from '../errors.js'
import { MAX_TARGET_LENGTH, rawErrorResponse, rawResponseBytes, uriTooLong } from './error-handler.js'
import { requestId } from './request-id.js'

// Without these a trickling client holds a connection: Fastify sets requestTimeout to 0 (no bound)
// and Node's headersTimeout is 60 s. docs/errors.md promises 30 s and 60 s.
/** How long a client may take to send the request line and headers; then 408. */
export const HEADERS_TIMEOUT_MS = 30_000
/** How long a client may take to send the whole request, body included; then 408. */
export const REQUEST_TIMEOUT_MS = 60_000

/** What Fastify sets on the servers it creates itself (fastify lib/server.js); a factory must do it. */
interface FastifyServerSettings {
  keepAliveTimeout: number
  connectionTimeout: number
  maxRequestsPerSocket: number
}

/** Requests no route can serve, whatever their path. */
function refusal(request: IncomingMessage): ApiError | undefined {
  // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400; HTTP/1.0 has no such rule.
  if (request.httpVersion === '1.1' && request.headers.host === undefined) {
    return new ApiError('BAD_REQUEST', 'The Host header is missing; every HTTP/1.1 request must have one.')
  }
  // Targets longer than the header limit never get here: clientErrorHandler answers them.
  if ((request.url ?? '').length > MAX_TARGET_LENGTH) return uriTooLong()
  return undefined
}

function answer(request: IncomingMessage, response: ServerResponse, error: ApiError): void {
  const { status, headers, body } = rawErrorResponse(error, requestId(request))
  response.writeHead(status, headers).end(body)
}

const expectationFailed = () => new ApiError('EXPECTATION_FAILED', 'The Expect header asks for something this service does not do; only 100-continue is supported.')

const notAProxy = () => new ApiError('NOT_IMPLEMENTED', 'CONNECT is not implemented: this service is not a proxy.')

/** Node handed the socket over: answer, read and drop what the client still sends, and never wait on it for long. */
function refuseTunnel(request: IncomingMessage, socket: Duplex): void {
  socket.on('error', () => socket.destroy())
  if (socket instanceof Socket) socket.setTimeout(HEADERS_TIMEOUT_MS, () => socket.destroy())
  socket.end(rawResponseBytes(rawErrorResponse(notAProxy(), requestId(request))))
  socket.resume()
}

/** Fastify's serverFactory: Node's HTTP/1.1 server with its own answers in the uniform error body. */
export const serverFactory: FastifyServerFactory = (handler, options) => {
  // requireHostHeader off: Node's own 400 has an empty body; refusal() answers instead.
  const settings = { requireHostHeader: false, headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS }
  const server = createServer(settings, (request, response) => {
    const error = refusal(request)
    if (error) answer(request, response, error)
    else handler(request, response)
  })
  const fastify = options as unknown as FastifyServerSettings
  server.keepAliveTimeout = fastify.keepAliveTimeout
  server.setTimeout(fastify.connectionTimeout)
  if (fastify.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = fastify.maxRequestsPerSocket
  // RFC 9110 §10.1.1: Node answers 100-continue itself; any other expectation is 417.
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => answer(request, response, refusal(request) ?? expectationFailed()))
  // RFC 9110 §9.3.6: CONNECT asks for a tunnel; without a listener Node closes the connection unanswered.
  server.on('connect', refuseTunnel)
  return server
}

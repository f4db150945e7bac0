/**
 * REQUEST_TIMEOUT_MS: a request not answered in time gets a 503 with Retry-After (DESIGN "Limits
 * and faults"), from its first hook to its last byte; one whose body is still arriving, a 408. Fastify's own `handlerTimeout` is not used:
 * on Node 20 it is cleared when a request's body has been read (IncomingMessage emits `close`
 * then), so a write waiting on the database was never timed out.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'

/** Seconds a client waits before retrying a request that was not answered in time. */
const RETRY_AFTER = 5

const timedOut = () =>
  new ApiError('SERVICE_UNAVAILABLE', 'The request could not be answered in time; try again later.', [], {
    headers: { 'retry-after': String(RETRY_AFTER) },
  })

/**
 * The client, not the service, was slow: its body has not all come (RFC 9110 §15.5.9). What is
 * left of it will not be read, so the connection closes (RFC 9112 §9.6).
 */
const bodyTimedOut = () =>
  new ApiError('REQUEST_TIMEOUT', 'The request body was not received in time.', [], { headers: { connection: 'close' } })

declare module 'fastify' {
  interface FastifyRequest {
    /** When the request's time runs out (epoch milliseconds): a write must not commit after it. */
    deadline: number
  }
}

/** Each request's timer and the limit it was set to, until it is answered or exempted. */
const timers = new WeakMap<FastifyRequest, { timer: NodeJS.Timeout; timeoutMs: number }>()

export function installTimeLimit(app: FastifyInstance, timeoutMs: number): void {
  app.decorateRequest('deadline', 0)
  app.addHook('onRequest', (request, reply, done) => {
    request.deadline = Date.now() + timeoutMs
    const timer = setTimeout(() => {
      // The handler goes on; write handlers check `reply.sent` before starting a write.
      if (!reply.sent) reply.send(request.raw.complete ? timedOut() : bodyTimedOut())
    }, timeoutMs)
    timers.set(request, { timer, timeoutMs })
    // `close` comes when the response is done or the connection is gone, whichever is first.
    reply.raw.once('close', () => clearTimeout(timer))
    done()
  })
}

/**
 * A response that streams for as long as it takes (an export, src/resources/export/): from here
 * on REQUEST_TIMEOUT_MS no longer bounds the whole request but each wait on the client. The
 * connection is closed once nothing has gone through it for that long: a client that stopped
 * reading does not hold the response open.
 */
export function streamWithoutTimeLimit(request: FastifyRequest, reply: FastifyReply): void {
  const limit = timers.get(request)
  if (!limit) return
  clearTimeout(limit.timer)
  const socket = request.raw.socket
  const idle = () => socket.destroy()
  socket.setTimeout(limit.timeoutMs, idle)
  reply.raw.once('close', () => socket.off('timeout', idle))
}

/**
 * REQUEST_TIMEOUT_MS: a request not answered in time gets a 503 with Retry-After (DESIGN "Limits
 * and faults"), from its first hook to its last byte. Fastify's own `handlerTimeout` is not used:
 * on Node 20 it is cleared when a request's body has been read (IncomingMessage emits `close`
 * then), so a write waiting on the database was never timed out.
 */
import type { FastifyInstance } from 'fastify'
import { ApiError } from '../errors.js'

/** Seconds a client waits before retrying a request that was not answered in time. */
const RETRY_AFTER = 5

const timedOut = () =>
  new ApiError('SERVICE_UNAVAILABLE', 'The request could not be answered in time; try again later.', [], {
    headers: { 'retry-after': String(RETRY_AFTER) },
  })

export function installTimeLimit(app: FastifyInstance, timeoutMs: number): void {
  app.addHook('onRequest', (_request, reply, done) => {
    const timer = setTimeout(() => {
      // The handler goes on; write handlers check `reply.sent` before starting a write.
      if (!reply.sent) reply.send(timedOut())
    }, timeoutMs)
    // `close` comes when the response is done or the connection is gone, whichever is first.
    reply.raw.once('close', () => clearTimeout(timer))
    done()
  })
}

/** Request ids: a client's X-Request-Id when it is sane, else a new one; echoed on every response. */
import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

const SANE_ID = /^[A-Za-z0-9._:-]{1,128}$/

/** Fastify's genReqId: trusts a caller's id only if it cannot break a log line or a header. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && SANE_ID.test(given) ? given : randomUUID()
}

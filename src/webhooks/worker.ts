/**
 * The webhook worker every instance runs (DESIGN "Events"): each round it fans new events out
 * into deliveries, claims the deliveries that are due, and makes the attempts, in the Standard
 * Webhooks format. Everything it knows is in the database, so any instance can take over from one
 * that stopped or died: a delivery whose instance died is claimed again once its claim lapses.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { WebhooksConfig } from '../config.js'
import type { Claim, WebhookDeliveries } from '../db/webhooks.js'
import { DISABLE_AFTER_MS, MAX_ATTEMPTS, retryDelay } from './schedule.js'
import type { Sender } from './send.js'
import { sign } from './signature.js'

/** How often an instance looks for new events and due deliveries. */
export const WORKER_EVERY_MS = 500
/** Events fanned out per webhook at once. */
const BATCH = 500
/** Attempts one instance makes at once. */
const CONCURRENCY = 16

const USER_AGENT = 'Resourceful-Webhooks/1'

export interface WebhookWorker {
  /** Ends the rounds, cuts the attempts in flight short and gives their deliveries back. */
  stop(): Promise<void>
}

/** The body of a delivery (Standard Webhooks "Payload structure"). */
const deliveryBody = (claim: Pick<Claim, 'type' | 'occurredAt' | 'data'>): string =>
  JSON.stringify({ type: claim.type, timestamp: claim.occurredAt.toISOString(), data: claim.data })

export function startWorker(deliveries: WebhookDeliveries, sender: Sender, config: WebhooksConfig, log: FastifyBaseLogger): WebhookWorker {
  // A claim outlasts an attempt (it is abandoned at the time limit) and the recording of its outcome.
  const leaseMs = 2 * config.timeoutMs + 1000
  let stopping = false
  const attempts = new Set<AbortController>()
  const inFlight = new Set<Promise<void>>()
  let round: Promise<void> | undefined

  async function attempt(claim: Claim): Promise<void> {
    // Claimed by a round that was under way when the worker stopped.
    if (stopping) return deliveries.release([claim.id])
    if (claim.spent) {
      await deliveries.failed(claim.id, { status: null, error: 'Its last attempt was cut short: the instance making it stopped.', retryInMs: undefined, disableAfterMs: DISABLE_AFTER_MS })
      return
    }
    const body = deliveryBody(claim)
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': claim.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': sign(claim.secret, claim.eventId, timestamp, body),
    }
    // One controller per attempt, aborted by its time limit or by stop(): nothing is left listening
    // on a signal that lives as long as the worker.
    const cut = new AbortController()
    const timer = setTimeout(() => cut.abort(), config.timeoutMs)
    attempts.add(cut)
    const outcome = await sender.post(claim.url, headers, body, cut.signal).finally(() => {
      clearTimeout(timer)
      attempts.delete(cut)
    })
    if (stopping) return deliveries.release([claim.id])
    if ('status' in outcome && outcome.status >= 200 && outcome.status < 300) return deliveries.succeeded(claim.id, outcome.status)
    const status = 'status' in outcome ? outcome.status : null
    const error = 'status' in outcome ? `The receiver answered ${outcome.status}.` : cut.signal.aborted ? `No answer within ${config.timeoutMs} ms.` : outcome.error
    // 410 Gone: the receiver says it will never take deliveries again.
    const gone = status === 410
    const disabled = await deliveries.failed(claim.id, {
      status,
      error,
      retryInMs: gone ? undefined : retryDelay(claim.attempts, config.retryBaseMs),
      disable: gone ? 'The receiver answered 410 Gone.' : undefined,
      disableAfterMs: DISABLE_AFTER_MS,
    })
    if (disabled) log.warn({ webhook: disabled.id, url: disabled.url, reason: disabled.reason }, 'webhook disabled')
  }

  function track(claim: Claim): void {
    const running: Promise<void> = attempt(claim)
      .catch((error: unknown) => log.warn({ err: error, delivery: claim.id }, 'could not record a webhook delivery; it is tried again when its claim lapses'))
      .finally(() => inFlight.delete(running))
    inFlight.add(running)
  }

  async function work(): Promise<void> {
    // Fan out until every webhook has caught up, then attempt what is due, as many as there is room for.
    while ((await deliveries.dispatch(BATCH)) === BATCH && !stopping);
    const room = CONCURRENCY - inFlight.size
    if (room <= 0 || stopping) return
    for (const claim of await deliveries.claim(room, leaseMs, MAX_ATTEMPTS)) track(claim)
  }

  const timer = setInterval(() => {
    round ??= work()
      .catch((error: unknown) => log.warn({ err: error }, 'could not deliver webhooks this round'))
      .finally(() => (round = undefined))
  }, WORKER_EVERY_MS)
  timer.unref()

  return {
    async stop() {
      clearInterval(timer)
      stopping = true
      for (const cut of attempts) cut.abort()
      await round
      await Promise.all(inFlight)
      sender.close()
    },
  }
}

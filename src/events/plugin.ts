/**
 * The events' side of the service in one place: the outbox a write drafts its events with, the
 * log, the tail the streams read, the streams, the webhook worker, and their housekeeping. It
 * ends on its own before the server waits for its requests: a stream never ends by itself, and
 * the worker gives back what it was delivering while the database is still open.
 */
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'
import { eventLog, type EventLog } from '../db/events.js'
import { webhookDeliveries, type WebhookDeliveries } from '../db/webhooks.js'
import { every, PRUNE_EVERY_MS } from '../http/housekeeping.js'
import { SAFE_METHODS } from '../http/methods.js'
import { historyKept, type Collection } from '../resources/collection.js'
import { createSender } from '../webhooks/send.js'
import { startWorker, type WebhookWorker } from '../webhooks/worker.js'
import { createOutbox, type Outbox } from './outbox.js'
import { eventStreams, type EventStreams } from './stream.js'
import { createTailer, type Tailer } from './tailer.js'
import type { CollectionVersions } from '../resources/revalidation.js'
import { collectionVersions } from './versions.js'

export interface EventsOptions {
  db: Database
  /** Every collection whose changes are events. */
  collections: readonly Collection[]
  /** The newest API version served: events show items as it does, whichever version made the change. */
  newest: number
  config: Pick<Config, 'eventsRetentionDays' | 'eventStreamsPerCaller' | 'eventStreamHeartbeatMs' | 'webhooks'>
}

export interface EventServices {
  outbox: Outbox
  log: EventLog
  streams: EventStreams
  tailer: Tailer
  /** The collections' versions as the tail sees them: a list's 304 without its query. */
  versions: CollectionVersions
  /**
   * Starts delivering webhooks, once the database is migrated; `observe` wraps the deliveries'
   * store (the metrics count their outcomes).
   */
  startWorker(observe: (deliveries: WebhookDeliveries) => WebhookDeliveries): void
}

export function installEvents(app: FastifyInstance, { db, collections, newest, config }: EventsOptions): EventServices {
  const outbox = createOutbox(newest, collections)
  const log = eventLog(db, outbox.render)
  // Collections that keep their history longer keep their events out of the feed's sight.
  const kept = historyKept(collections)
  every(app, PRUNE_EVERY_MS, 'delete expired events', () => log.prune(config.eventsRetentionDays, kept))
  const tailer = createTailer(log, (error) => app.log.warn({ err: error }, 'could not read new events for the streams'))
  const versions = collectionVersions(tailer, (error) => app.log.warn({ err: error }, 'could not start following the event log'))
  // Before the answer leaves: a client that reads after its write revalidates against it.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!SAFE_METHODS.has(request.method) && reply.statusCode < 400) versions.wrote()
    done(null, payload)
  })
  const streams = eventStreams(log, tailer, { perCaller: config.eventStreamsPerCaller, heartbeatMs: config.eventStreamHeartbeatMs })
  let worker: WebhookWorker | undefined
  app.addHook('preClose', async () => {
    streams.closeAll()
    tailer.close()
    await worker?.stop()
  })
  return {
    outbox,
    log,
    streams,
    tailer,
    versions,
    startWorker(observe) {
      worker = startWorker(observe(webhookDeliveries(db, outbox.render)), createSender(config.webhooks.allowPrivate), config.webhooks, app.log)
    },
  }
}

/**
 * The service's own metrics beside the requests': its database pools, how far the event
 * streams' tail is behind, and the webhook deliveries. Gauges are read at each scrape; delivery
 * outcomes are counted as the worker records them.
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { Database, PoolCounts } from '../db/client.js'
import type { WebhookDeliveries } from '../db/webhooks.js'
import type { Tailer } from '../events/tailer.js'
import { readings, type EventLag } from './readings.js'

export const DELIVERY_OUTCOMES = ['succeeded', 'retrying', 'failed'] as const
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number]

export interface ServiceMetrics {
  /** `deliveries`, counting the outcome of each attempt it records. */
  countOutcomes(deliveries: WebhookDeliveries): WebhookDeliveries
}

export interface MetricSources {
  db: Database
  tailer: Pick<Tailer, 'position'>
  /** A reading the database could not give: its gauge is NaN in that scrape. */
  onError(error: unknown): void
}

const POOL_GAUGES: Record<Exclude<keyof PoolCounts, 'pool'>, [name: string, help: string]> = {
  total: ['resourceful_db_pool_connections', 'Connections the pool has open to PostgreSQL'],
  idle: ['resourceful_db_pool_idle_connections', 'Open connections no statement is using'],
  waiting: ['resourceful_db_pool_waiting_requests', 'Statements waiting for a connection (one waiting 2 s is a 503)'],
  max: ['resourceful_db_pool_max_connections', 'The most connections the pool opens'],
}

/** A gauge without labels whose value is read at each scrape; NaN when the reading failed. */
function readGauge(registry: Registry, name: string, help: string, read: () => Promise<number | undefined>): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    async collect() {
      this.set((await read()) ?? NaN)
    },
  })
}

/** The pools' gauges, by pool (`primary`, `replica`); PGlite, one connection in the process, has none. */
function poolGauges(registry: Registry, db: Database): void {
  if (db.pools().length === 0) return
  for (const [field, [name, help]] of Object.entries(POOL_GAUGES) as [keyof typeof POOL_GAUGES, [string, string]][]) {
    new Gauge({
      name,
      help,
      labelNames: ['pool'],
      registers: [registry],
      collect() {
        for (const counts of db.pools()) this.set({ pool: counts.pool }, counts[field])
      },
    })
  }
}

/**
 * Gauges read from the database at each scrape. Event lag: what the streams' tail has not read
 * yet; nothing waits while it is not running (no stream open). Deliveries still to be made.
 */
function readingGauges(registry: Registry, { db, tailer, onError }: MetricSources): void {
  const read = readings(db)
  async function lagNow(): Promise<EventLag | undefined> {
    const position = tailer.position
    if (!position) return { unseen: 0, lagSeconds: 0 }
    try {
      return await read.eventLag(position)
    } catch (error) {
      onError(error)
      return undefined
    }
  }
  // Both gauges are collected in the same scrape: one reading serves them.
  let current: Promise<EventLag | undefined> | undefined
  const lag = () => (current ??= lagNow().finally(() => (current = undefined)))
  readGauge(registry, 'resourceful_events_unseen', `Events committed that the event streams' tail has not read yet (counted up to 100,000)`, async () => (await lag())?.unseen)
  readGauge(registry, 'resourceful_events_lag_seconds', `How long the oldest event the tail has not read has been waiting, in seconds`, async () => (await lag())?.lagSeconds)
  readGauge(registry, 'resourceful_webhook_deliveries_pending', 'Webhook deliveries still to be made, by any instance (counted up to 100,000)', () =>
    read.pendingDeliveries().catch((error: unknown) => void onError(error)),
  )
}

export function serviceMetrics(registry: Registry, sources: MetricSources): ServiceMetrics {
  poolGauges(registry, sources.db)
  readingGauges(registry, sources)
  const outcomes = new Counter({
    name: 'resourceful_webhook_deliveries_total',
    help: 'Webhook delivery attempts this instance made, by outcome: succeeded, retrying (failed, tried again later), failed (for good)',
    labelNames: ['outcome'],
    registers: [registry],
  })
  // Every series from the start: a rate over a series that appears only at its first increment misses it.
  for (const outcome of DELIVERY_OUTCOMES) outcomes.inc({ outcome }, 0)
  return {
    countOutcomes: (deliveries) => ({
      ...deliveries,
      async succeeded(id, status) {
        await deliveries.succeeded(id, status)
        outcomes.inc({ outcome: 'succeeded' })
      },
      async failed(id, failure) {
        const disabled = await deliveries.failed(id, failure)
        outcomes.inc({ outcome: failure.retryInMs === undefined ? 'failed' : 'retrying' })
        return disabled
      },
    }),
  }
}

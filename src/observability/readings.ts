/** The statements a metrics scrape runs: the events the tail has not read yet, the webhook deliveries waiting. */
import type { Statements } from '../db/client.js'
import type { Position } from '../db/events.js'

/** Rows a reading counts at most: a scrape stays cheap however far behind the service is. */
export const MAX_COUNTED = 100_000

/**
 * Committed events after `position`, first ones first (the (tx, id) index), and the age of the
 * oldest of them: how long it has been waiting. `occurred_at` is its transaction's start.
 */
const UNSEEN = `SELECT count(*)::int AS unseen, coalesce(extract(epoch FROM now() - min(occurred_at)), 0)::float8 AS lag
    FROM (SELECT occurred_at FROM events WHERE (tx, id) > ($1::text::xid8, $2::bigint) ORDER BY tx, id LIMIT ${MAX_COUNTED}) unseen`

/** Deliveries still to be made, now or at their next attempt, by any instance (the (status, next_attempt_at) index). */
const PENDING = `SELECT count(*)::int AS pending FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT ${MAX_COUNTED}) pending`

export interface EventLag {
  /** Events written after the tail's position, up to MAX_COUNTED. */
  unseen: number
  /** Seconds the oldest of them has waited; 0 when there is none. */
  lagSeconds: number
}

export function readings(db: Statements) {
  return {
    async eventLag(after: Position): Promise<EventLag> {
      const [row] = await db.query<{ unseen: number; lag: number }>(UNSEEN, [String(after.tx), after.id], 'metrics_event_lag')
      return { unseen: row!.unseen, lagSeconds: row!.lag }
    },

    async pendingDeliveries(): Promise<number> {
      const [row] = await db.query<{ pending: number }>(PENDING, [], 'metrics_pending_deliveries')
      return row!.pending
    },
  }
}

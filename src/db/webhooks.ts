/**
 * The webhook worker's statements (src/webhooks/worker.ts). Each is one statement, committed on
 * its own: an instance that dies between two of them leaves nothing half done. No two instances
 * fan out the same webhook or claim the same delivery at once (FOR UPDATE SKIP LOCKED), and a
 * claim lapses when its instance has died, so another makes the attempt.
 */
import type { Database } from './client.js'
import { horizonOf, type RenderEvent } from './events.js'

/** A UUIDv7 made in SQL (PostgreSQL 17 has no uuidv7()): the time in milliseconds, then random bits. */
const UUID_V7 = `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) placing substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid`

/** A later updated_at than the row's, even within one millisecond: its ETag changes with it. */
const TOUCHED = `greatest(clock_timestamp(), updated_at + interval '1 millisecond')`

/**
 * Fans the events below the horizon ($1) out to every webhook not locked by another instance:
 * at most $2 events per webhook, a delivery for each event an active webhook's patterns match,
 * and each webhook's cursor moved past every event read. An inactive webhook's cursor moves too:
 * what happens while it is disabled is not delivered when it is enabled again.
 */
const DISPATCH = `WITH hooks AS (
    SELECT id, active, events AS patterns, cursor_tx, cursor_id FROM webhooks ORDER BY id FOR NO KEY UPDATE SKIP LOCKED
  ), batch AS (
    SELECT h.id AS webhook_id, h.active, h.patterns, e.tx, e.id AS event_id, e.type
      FROM hooks h CROSS JOIN LATERAL (
        SELECT tx, id, type FROM events
         WHERE tx < $1::xid8 AND (tx, id) > (h.cursor_tx, h.cursor_id)
         ORDER BY tx, id LIMIT $2) e
  ), made AS (
    INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, next_attempt_at)
    SELECT ${UUID_V7}, webhook_id, event_id, type, now() FROM batch
     WHERE active AND (type = ANY(patterns) OR split_part(type, '.', 1) || '.*' = ANY(patterns) OR '*' = ANY(patterns))
     ORDER BY tx, event_id
    ON CONFLICT (webhook_id, event_id) DO NOTHING
    RETURNING 1
  ), moved AS (
    UPDATE webhooks w SET cursor_tx = last.tx, cursor_id = last.event_id
      FROM (SELECT DISTINCT ON (webhook_id) webhook_id, tx, event_id FROM batch ORDER BY webhook_id, tx DESC, event_id DESC) last
     WHERE w.id = last.webhook_id
    RETURNING 1
  )
  SELECT (SELECT count(*) FROM made)::int AS made,
         (SELECT coalesce(max(n), 0) FROM (SELECT count(*) AS n FROM batch GROUP BY webhook_id) read)::int AS fullest,
         (SELECT count(*) FROM moved)::int AS moved`

/**
 * Claims up to $1 due deliveries of active webhooks for $2 milliseconds, counting the attempt (up
 * to $3), with what the attempt needs: the webhook's URL and secret, the event. `spent`: every
 * attempt has been made, the last one cut short by its instance's end; there is none left to make.
 */
const CLAIM = `WITH due AS (
    SELECT d.id, d.attempts >= $3 AS spent FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
     WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND (d.claimed_until IS NULL OR d.claimed_until < now()) AND w.active
     ORDER BY d.next_attempt_at, d.id
     LIMIT $1
     FOR UPDATE OF d SKIP LOCKED
  ), claimed AS (
    UPDATE webhook_deliveries d SET claimed_until = clock_timestamp() + make_interval(secs => $2 / 1000.0), attempts = least(d.attempts + 1, $3),
           updated_at = ${TOUCHED}
      FROM due WHERE d.id = due.id
    RETURNING d.id, d.webhook_id, d.event_id, d.attempts, due.spent
  )
  SELECT c.id, c.event_id::text AS event_id, c.attempts, c.spent, w.url, w.secret, e.type, e.occurred_at, e.collection, e.item, e.data
    FROM claimed c JOIN webhooks w ON w.id = c.webhook_id JOIN events e ON e.id = c.event_id`

/** The delivery ($1) succeeded with status $2; its webhook is failing no more. */
const SUCCEEDED = `WITH done AS (
    UPDATE webhook_deliveries SET status = 'succeeded', last_status = $2, last_error = NULL, next_attempt_at = NULL, claimed_until = NULL, updated_at = ${TOUCHED}
     WHERE id = $1 AND status = 'pending'
    RETURNING webhook_id
  )
  UPDATE webhooks SET failing_since = NULL, updated_at = ${TOUCHED}
   WHERE id = (SELECT webhook_id FROM done) AND failing_since IS NOT NULL`

/**
 * The delivery ($1) failed with status $2 (null: no answer) and error $3: tried again in $4
 * milliseconds, or failed for good when $4 is null. Its webhook is failing since its first
 * failure after a success, and is disabled with the reason $5 when one is given (a 410), or when
 * it has been failing for $6 milliseconds.
 */
const FAILED = `WITH done AS (
    UPDATE webhook_deliveries
       SET status = CASE WHEN $4::int IS NULL THEN 'failed' ELSE 'pending' END::delivery_status,
           last_status = $2, last_error = $3, claimed_until = NULL, updated_at = ${TOUCHED},
           next_attempt_at = CASE WHEN $4::int IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $4::int / 1000.0) END
     WHERE id = $1 AND status = 'pending'
    RETURNING webhook_id
  ), judged AS (
    SELECT w.id, w.active AS was_active, coalesce($5::text, CASE WHEN w.failing_since <= now() - make_interval(secs => $6::bigint / 1000.0) THEN 'Every delivery failed for 24 hours.' END) AS reason
      FROM webhooks w JOIN done ON w.id = done.webhook_id
  )
  UPDATE webhooks w
     SET failing_since = coalesce(w.failing_since, now()),
         updated_at = CASE WHEN w.failing_since IS NULL OR judged.reason IS NOT NULL THEN ${TOUCHED} ELSE w.updated_at END,
         active = w.active AND judged.reason IS NULL,
         disabled_reason = CASE WHEN w.active AND judged.reason IS NOT NULL THEN judged.reason ELSE w.disabled_reason END
    FROM judged WHERE w.id = judged.id
  RETURNING w.id, w.url, (judged.was_active AND judged.reason IS NOT NULL) AS disabled, judged.reason`

/** Gives back deliveries claimed by an instance that stops: tried again soon, by another. */
const RELEASE = `UPDATE webhook_deliveries SET claimed_until = NULL, attempts = attempts - 1, updated_at = ${TOUCHED}
   WHERE id = ANY($1::uuid[]) AND status = 'pending'`

/** A delivery to attempt, as claimed. */
export interface Claim {
  id: string
  /** The event's id: the delivery's `webhook-id`, the same on every attempt. */
  eventId: string
  /** This attempt's number, from 1. */
  attempts: number
  /** No attempt is left: the last one was cut short. */
  spent: boolean
  url: string
  secret: string
  type: string
  occurredAt: Date
  data: Record<string, unknown>
}

/** `render` makes an event's data from what is stored (src/db/events.ts). */
export function webhookDeliveries(db: Database, render: RenderEvent) {
  return {
    /** Makes the deliveries of the events since the last call; the most events read for one webhook. */
    async dispatch(batch: number): Promise<number> {
      const horizon = await horizonOf(db)
      const [result] = await db.query<{ fullest: number }>(DISPATCH, [horizon, batch], 'webhooks_dispatch')
      return result!.fullest
    },

    async claim(limit: number, leaseMs: number, maxAttempts: number): Promise<Claim[]> {
      type Row = { id: string; event_id: string; attempts: number; spent: boolean; url: string; secret: string; type: string; occurred_at: Date }
      const rows = await db.query<Row & { collection: string; item: Record<string, unknown> | null; data: Record<string, unknown> }>(
        CLAIM,
        [limit, leaseMs, maxAttempts],
        'webhooks_claim',
      )
      return rows.map((r) => ({ id: r.id, eventId: r.event_id, attempts: r.attempts, spent: r.spent, url: r.url, secret: r.secret, type: r.type, occurredAt: r.occurred_at, data: render(r.collection, r.item, r.data) }))
    },

    async succeeded(id: string, status: number): Promise<void> {
      await db.query(SUCCEEDED, [id, status], 'webhooks_succeeded')
    },

    /** Records a failed attempt; the webhook, when this failure disabled it. */
    async failed(id: string, failure: { status: number | null; error: string; retryInMs: number | undefined; disable?: string; disableAfterMs: number }): Promise<{ id: string; url: string; reason: string } | undefined> {
      const rows = await db.query<{ id: string; url: string; disabled: boolean; reason: string }>(
        FAILED,
        [id, failure.status, failure.error.slice(0, 500), failure.retryInMs ?? null, failure.disable ?? null, failure.disableAfterMs],
        'webhooks_failed',
      )
      return rows[0]?.disabled ? rows[0] : undefined
    },

    async release(ids: readonly string[]): Promise<void> {
      if (ids.length > 0) await db.query(RELEASE, [ids])
    },
  }
}

export type WebhookDeliveries = ReturnType<typeof webhookDeliveries>

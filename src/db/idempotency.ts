/** Idempotency keys as the Idempotency-Key layer needs them: a few statements, by hand. */
import type { Database, Statements } from './client.js'

/** A response as it was sent, to be sent again. */
export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export type Claim =
  /** The key is this request's now: run it, then `complete` or `release`. */
  | { kind: 'claimed' }
  /** The same request was answered: send this again. */
  | { kind: 'done'; response: StoredResponse }
  /** The same request is still running somewhere. */
  | { kind: 'in-flight' }
  /** The same request created this item, and its process ended before answering: answer with it. */
  | { kind: 'written'; itemId: string }
  /** The key was used for another request. */
  | { kind: 'reused' }

/** How long keys and their responses are kept (DESIGN: 24 h). */
export const IDEMPOTENCY_RETENTION = '24 hours'
/**
 * How long a request in flight holds its key. A live process always finishes its request (and
 * completes or releases the key) well within it; only a crashed one leaves a claim to expire.
 */
const LEASE = '60 seconds'

/** A claimed key of a create: whose it is, and the key. */
export interface KeyClaim {
  caller: string
  key: string
}

/**
 * The UPDATE that records, in a create's own statement, the item of the CTE `source` on the
 * claimed key in parameters `$caller` and `$caller + 1`.
 */
export const recordItemOf = (source: string, caller: number) =>
  `UPDATE idempotency_keys SET item_id = ${source}.id FROM ${source} WHERE caller = $${caller} AND key = $${caller + 1}`

interface Row {
  fingerprint: string
  item_id: string | null
  lapsed: boolean
  status: number | null
  headers: Record<string, string> | null
  body: string | null
}

export function idempotencyKeys(db: Database) {
  return {
    /**
     * Takes the key for a request with this fingerprint, or says what holds it. A key older than
     * the retention, or abandoned in flight by the same request, is taken over. Times are the
     * database's, so every instance agrees on them.
     */
    async claim(caller: string, key: string, fingerprint: string): Promise<Claim> {
      for (;;) {
        const claimed = await db.query(
          `INSERT INTO idempotency_keys AS k (caller, key, fingerprint, created_at, locked_until) VALUES ($1, $2, $3, now(), now() + interval '${LEASE}')
           ON CONFLICT (caller, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at,
             locked_until = EXCLUDED.locked_until, status = NULL, headers = NULL, body = NULL, item_id = NULL
           WHERE k.created_at < now() - interval '${IDEMPOTENCY_RETENTION}'
             OR (k.status IS NULL AND k.item_id IS NULL AND k.locked_until < now() AND k.fingerprint = EXCLUDED.fingerprint)
           RETURNING 1`,
          [caller, key, fingerprint],
          'idempotency_claim',
        )
        if (claimed.length === 1) return { kind: 'claimed' }
        const rows = await db.query<Row>(
          'SELECT fingerprint, item_id, locked_until < now() AS lapsed, status, headers, body FROM idempotency_keys WHERE caller = $1 AND key = $2',
          [caller, key],
          'idempotency_read',
        )
        const row = rows[0]
        // Gone between the two statements (released by its request): try to take it again.
        if (!row) continue
        if (row.fingerprint !== fingerprint) return { kind: 'reused' }
        // Written, and never answered by a process that is gone: the item is the answer.
        if (row.status === null && row.item_id !== null && row.lapsed) return { kind: 'written', itemId: row.item_id }
        if (row.status === null) return { kind: 'in-flight' }
        return { kind: 'done', response: { status: row.status, headers: row.headers ?? {}, body: row.body ?? '' } }
      }
    },

    /** Records, in the create's transaction `tx`, the item the request with a claimed key created. */
    async recordItem(tx: Statements, claim: KeyClaim, itemId: string): Promise<void> {
      await tx.query('UPDATE idempotency_keys SET item_id = $3 WHERE caller = $1 AND key = $2', [claim.caller, claim.key, itemId], 'idempotency_item')
    },

    /** Keeps the response of a claimed key, for its retries. */
    async complete(caller: string, key: string, response: StoredResponse): Promise<void> {
      await db.query(
        'UPDATE idempotency_keys SET status = $3, headers = $4, body = $5, locked_until = NULL WHERE caller = $1 AND key = $2',
        [caller, key, response.status, JSON.stringify(response.headers), response.body],
        'idempotency_complete',
      )
    },

    /** Gives a claimed key back unanswered (the request failed on the server's side): a retry runs it again. */
    async release(caller: string, key: string): Promise<void> {
      await db.query('DELETE FROM idempotency_keys WHERE caller = $1 AND key = $2 AND status IS NULL', [caller, key], 'idempotency_release')
    },

    /** Deletes keys past the retention. */
    async prune(): Promise<number> {
      const rows = await db.query(`DELETE FROM idempotency_keys WHERE created_at < now() - interval '${IDEMPOTENCY_RETENTION}' RETURNING 1`, [])
      return rows.length
    },
  }
}

export type IdempotencyKeys = ReturnType<typeof idempotencyKeys>

/** Where the primary stands after a write, for the reads that follow it (src/http/read-your-writes.ts). */
import { lsnOf, type Statements } from './client.js'

export interface WritePosition {
  /** The primary's log position: a replica that has replayed this far has the write. */
  lsn: bigint
  /** The next transaction id: the write's transaction is below it, so a reader of the event log past it has its events. */
  xmax: bigint
}

/**
 * Taken after the write has committed, so both are past it: the log's insert position is at or
 * after the end of its commit record, and every transaction id below xmax, its own too, was
 * handed out before.
 */
export async function writePosition(db: Statements): Promise<WritePosition> {
  const [row] = await db.query<{ lsn: string; xmax: string }>(
    'SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_snapshot_xmax(pg_current_snapshot())::text AS xmax',
    [],
    'write_position',
  )
  return { lsn: lsnOf(row!.lsn), xmax: BigInt(row!.xmax) }
}

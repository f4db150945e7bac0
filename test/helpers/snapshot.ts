/**
 * A database's rows, taken as JSON and put into another migrated database as they were: the demo
 * shop seeded once per test process instead of once per docs page and database (seeding hashes
 * five passwords with scrypt: 2.5 s of CPU; putting its rows back takes 0.05 s).
 */
import type { Database } from '../../src/db/client.js'

/** Every table's rows but the migrations' bookkeeping, by table. */
export type Snapshot = ReadonlyMap<string, unknown[]>

const TABLES = "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations' ORDER BY 1"

export async function takeSnapshot(db: Database): Promise<Snapshot> {
  const snapshot = new Map<string, unknown[]>()
  for (const { name } of await db.query<{ name: string }>(TABLES, [])) {
    snapshot.set(name, (await db.query<{ rows: unknown[] }>(`SELECT coalesce(json_agg(t), '[]') AS rows FROM "${name}" t`, []))[0]!.rows)
  }
  return snapshot
}

/**
 * Puts a snapshot's rows into `db`, a migrated database, in place of its own: triggers and
 * foreign keys are off meanwhile (`session_replication_role`), so derived rows (counts, totals)
 * come from the snapshot, not again from the triggers. Identities continue after the rows'. A
 * transaction id the rows name (`xid8`: the event feed's order) may be one this database has not
 * reached, and so would sort after its new writes or stay hidden past its horizon: each becomes
 * the id of the transaction that puts them, so they keep their order by id, before any new write.
 */
export async function restoreSnapshot(db: Database, snapshot: Snapshot): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SET LOCAL session_replication_role = replica', [])
    for (const [table, rows] of snapshot) {
      // A migration may have written rows of its own (row_counts): the snapshot's replace them.
      await tx.query(`DELETE FROM "${table}"`, [])
      if (rows.length) await tx.query(`INSERT INTO "${table}" OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_recordset(null::"${table}", $1)`, [JSON.stringify(rows)])
    }
    // Columns numbered by a sequence (identity or serial), and transaction ids.
    const columns = await tx.query<{ table: string; column: string; sequence: string | null }>(
      `SELECT table_name AS table, column_name AS column, pg_get_serial_sequence(format('%I', table_name), column_name) AS sequence
         FROM information_schema.columns WHERE table_schema = current_schema()
          AND (pg_get_serial_sequence(format('%I', table_name), column_name) IS NOT NULL OR data_type = 'xid8')`,
      [],
    )
    for (const { table, column, sequence } of columns.filter(({ table }) => snapshot.get(table)?.length)) {
      await tx.query(
        sequence ? `SELECT setval('${sequence}', (SELECT max("${column}") FROM "${table}"))` : `UPDATE "${table}" SET "${column}" = pg_current_xact_id()`,
        [],
      )
    }
  })
}

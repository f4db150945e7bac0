// kill -9 in the middle of a write storm: no acknowledged change is lost, and no change is left
// without its event nor an event without its change (the outbox shares the change's transaction).
import t, { type Test } from 'tap'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { adminCookie, started, tempDir } from '../helpers/service-process.js'
import { openDatabase } from '../../src/db/client.js'
import type { DatabaseConfig } from '../../src/config.js'

/** Writers at once, and the acknowledged creates after which the process is killed. */
const WRITERS = 8
const KILL_AFTER = 60
/** Every writer stops after this many requests, killed or not (bounded load). */
const MAX_PER_WRITER = 100

interface Rows {
  products: string[]
  created: string[]
  updated: string[]
}

async function storm(origin: string, kill: () => void): Promise<string[]> {
  const cookie = await adminCookie(origin)
  const headers = { cookie, 'content-type': 'application/json', origin }
  const acknowledged: string[] = []
  let killed = false
  const writer = async () => {
    for (let i = 0; i < MAX_PER_WRITER && !killed; i++) {
      try {
        const created = await fetch(`${origin}/api/v1/products`, { method: 'POST', headers, body: JSON.stringify(productBody()) })
        if (created.status !== 201) continue
        const { id } = (await created.json()) as { id: string }
        acknowledged.push(id)
        if (acknowledged.length === KILL_AFTER) {
          killed = true
          kill()
        }
        // A second change of the same item, racing the kill too.
        await fetch(`${origin}/api/v1/products/${id}`, { method: 'PATCH', headers, body: JSON.stringify({ stock: i }) })
      } catch {
        // The connection died with the process: what it carried was never acknowledged.
      }
    }
  }
  await Promise.all(Array.from({ length: WRITERS }, writer))
  return acknowledged
}

async function rows(config: DatabaseConfig): Promise<Rows> {
  const db = await openDatabase(config)
  try {
    const ids = async (sql: string) => (await db.query<{ id: string }>(sql, [])).map((r) => r.id).sort()
    return {
      products: await ids('SELECT id FROM products'),
      created: await ids("SELECT item_id AS id FROM events WHERE type = 'products.created'"),
      updated: await ids("SELECT DISTINCT item_id AS id FROM events WHERE type = 'products.updated'"),
    }
  } finally {
    await db.close()
  }
}

function check(t: Test, acknowledged: string[], found: Rows, stockChanged: string[]): void {
  t.ok(acknowledged.length >= KILL_AFTER, `${acknowledged.length} creates acknowledged before the kill`)
  const stored = new Set(found.products)
  t.same(acknowledged.filter((id) => !stored.has(id)), [], 'every acknowledged product is stored')
  t.same(found.created, found.products, 'each product has exactly one created event, and each event its product')
  const changed = new Set(stockChanged)
  t.same(found.updated.filter((id) => !changed.has(id)), [], 'every update event has its change')
  t.same(stockChanged.filter((id) => !found.updated.includes(id)), [], 'and every change its event')
}

const stockChangedSql = "SELECT id FROM products WHERE updated_at > created_at"

for (const kind of databaseKinds()) {
  t.test(`${kind}: kill -9 during a write storm loses no acknowledged change and splits no change from its event`, async (t) => {
    const database = kind === 'postgres' ? await createTestDatabase('postgres') : undefined
    if (database) t.teardown(() => database.drop())
    const dataDir = kind === 'pglite' ? tempDir(t) : ''
    const config: DatabaseConfig = database?.config ?? { kind: 'pglite', dataDir }
    const env: Record<string, string> = database ? { DATABASE_URL: (database.config as { url: string }).url } : { DATA_DIR: dataDir }
    const server = await started(t, env)
    const acknowledged = await storm(server.origin, () => server.child.kill('SIGKILL'))
    const exit = await server.exited
    t.equal(exit.code, null, 'killed, not exited')

    const found = await rows(config)
    const db = await openDatabase(config)
    const stockChanged = (await db.query<{ id: string }>(stockChangedSql, [])).map((r) => r.id).sort()
    await db.close()
    check(t, acknowledged, found, stockChanged)
  })
}

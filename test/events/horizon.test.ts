// The change feed never skips an event (DESIGN "Events"): ids are taken at insert but seen at
// commit, so a feed of `id > after` loses the event of a transaction that commits after a later
// one. PostgreSQL only: PGlite is one connection, where transactions cannot overlap.
import pg from 'pg'
import t, { type Test } from 'tap'
import { databaseKinds } from '../helpers/databases.js'
import { startApi, V1, type Api } from '../helpers/api.js'
import { productBody } from '../helpers/fixtures.js'

if (!databaseKinds().includes('postgres')) {
  t.pass('skipped: PostgreSQL only, and none is configured (never in CI)')
} else {
  /** A reader of the real feed: GET /events?after=, as a client tails it. */
  const httpReader = (api: Api) => async (after: number): Promise<number[]> =>
    (await api.admin.get(`${V1}/events?size=100&after=${after}`)).body.map((e: { id: number }) => e.id)

  /** The feed every PostgreSQL outbox starts with, and the trap this test shows: `id > after`. */
  const naiveReader = (client: pg.Client) => async (after: number): Promise<number[]> =>
    (await client.query('SELECT id::int AS id FROM events WHERE id > $1 ORDER BY id LIMIT 100', [after])).rows.map((r) => r.id as number)

  /** Reads a feed to its current end from `after`, remembering every id seen; returns the new position. */
  async function tail(read: (after: number) => Promise<number[]>, after: number, seen: number[]): Promise<number> {
    for (;;) {
      const ids = await read(after)
      if (ids.length === 0) return after
      seen.push(...ids)
      after = ids.at(-1)!
    }
  }

  /**
   * A slow writer takes its event id and waits while three later writes commit; a reader tails
   * the feed meanwhile; then the slow writer commits. Returns what the reader saw and every event.
   */
  async function slowWriterScenario(t: Test, read: (api: Api, client: pg.Client) => (after: number) => Promise<number[]>) {
    const api = await startApi(t, 'postgres')
    const url = (api.databaseConfig as { url: string }).url
    const [slow, reader] = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })]
    await Promise.all([slow.connect(), reader.connect()])
    t.teardown(() => Promise.all([slow.end(), reader.end()]))
    const readFeed = read(api, reader)
    await api.admin.post(`${V1}/products`, productBody())
    const seen: number[] = []
    let after = await tail(readFeed, 0, seen)

    // As the service's writes do: announce, then write the change's event; do not commit yet.
    await slow.query('BEGIN; LOCK TABLE events IN ROW EXCLUSIVE MODE')
    const held = (await slow.query("INSERT INTO events (type, collection, item_id, data) VALUES ('products.updated', 'products', gen_random_uuid(), '{}') RETURNING id::int AS id")).rows[0].id as number
    for (let i = 0; i < 3; i++) await api.admin.post(`${V1}/products`, productBody())
    after = await tail(readFeed, after, seen)
    await slow.query('COMMIT')
    await tail(readFeed, after, seen)
    const all = (await reader.query('SELECT id::int AS id FROM events ORDER BY id')).rows.map((r) => r.id as number)
    return { seen, all, held }
  }

  t.test('a slow writer: the feed holds later events back until it commits, then shows each once', async (t) => {
    const { seen, all, held } = await slowWriterScenario(t, (api) => httpReader(api))
    t.equal(all.length, 5)
    t.same([...seen].sort((a, b) => a - b), all, 'every event, exactly once')
    t.ok(seen.indexOf(held) < seen.indexOf(Math.max(...all)), 'the slow writer\'s event before the later ones')
  })

  t.test('the same scenario defeats a feed of `id > after`: it skips the slow writer\'s event', async (t) => {
    const { seen, all, held } = await slowWriterScenario(t, (_, client) => naiveReader(client))
    t.equal(all.length, 5)
    t.notOk(seen.includes(held), 'the naive reader never sees it')
    t.equal(seen.length, 4)
  })

  t.test('8 writers at once while a reader tails with after=: every event seen exactly once', async (t) => {
    const api = await startApi(t, 'postgres')
    const seen: number[] = []
    let after = 0
    let writing = true
    const reader = (async () => {
      while (writing) after = await tail(httpReader(api), after, seen)
      after = await tail(httpReader(api), after, seen)
    })()
    const writer = async (n: number) => {
      for (let i = 0; i < 25; i++) {
        const created = await api.admin.post(`${V1}/products`, productBody())
        if (i % 3 === n % 3) await api.admin.patch(`${V1}/products/${created.body.id}`, { stock: i })
      }
    }
    await Promise.all(Array.from({ length: 8 }, (_, n) => writer(n)))
    writing = false
    await reader
    const all = (await api.db.query<{ n: number }>('SELECT id::int AS n FROM events ORDER BY events.id', [])).map((r) => r.n)
    t.ok(all.length >= 200)
    t.equal(new Set(seen).size, seen.length, 'no event twice')
    t.same([...seen].sort((a, b) => a - b), all, 'and none missing')
  })
}

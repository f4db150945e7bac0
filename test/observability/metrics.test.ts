// GET /metrics: Prometheus text of the requests (by method, route template and status), the
// process and the database pools (metrics-access.test.ts: who may scrape, and what it is not).
import { randomUUID } from 'node:crypto'
import t from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
import { eachDatabase, testConfig, V1 } from '../helpers/api.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { samples, valueOf } from './scrape.js'

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8'

t.test('a scrape: requests counted and timed by method, route template and status, never by their URL; the process; the database pools', (t) =>
  eachDatabase(t, async (t, api) => {
    const created = await api.admin.post(`${V1}/products`, productBody())
    t.equal(created.status, 201)
    t.equal((await api.get(`${V1}/products/${created.body.id}`)).status, 200)
    t.equal((await api.get(`${V1}/products/${created.body.id}`)).status, 200)
    t.equal((await api.get(`${V1}/products/${randomUUID()}`)).status, 404)
    const stray = `/no-such-path-${randomUUID()}`
    t.equal((await api.get(stray)).status, 404)

    const scrape = await api.get('/metrics')
    t.equal(scrape.status, 200)
    t.equal(scrape.headers.get('content-type'), PROMETHEUS_TEXT)
    const all = samples(scrape.text)
    const count = (labels: Record<string, string>) => valueOf(all, 'http_request_duration_seconds_count', labels)
    t.equal(count({ method: 'POST', route: '/api/v1/products', status_code: '201' }), 1)
    t.equal(count({ method: 'GET', route: '/api/v1/products/:id', status_code: '200' }), 2)
    t.equal(count({ method: 'GET', route: '/api/v1/products/:id', status_code: '404' }), 1, 'an unknown id is its route template too')
    t.equal(count({ method: 'GET', route: 'unmatched', status_code: '404' }), 1, 'what no route took is counted under one label')
    t.notOk(scrape.text.includes(created.body.id) || scrape.text.includes(stray), 'no URL, no id in any label')
    t.equal(valueOf(all, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/api/v1/products/:id', status_code: '200', le: '+Inf' }), 2)
    t.ok(all.some((s) => s.name === 'http_request_duration_seconds_bucket' && s.labels.le === '0.001'), 'buckets from a millisecond')
    t.ok(valueOf(all, 'process_cpu_user_seconds_total')! > 0, "the process's metrics")
    t.ok(valueOf(all, 'nodejs_eventloop_lag_seconds')! >= 0)
    t.notOk(all.some((s) => s.name.startsWith('http_request_summary')), 'no summary beside the histogram')

    // The pools: connections open, idle, waiting and the most there may be; PGlite, one
    // connection in the process, has none.
    const pool = all.filter((s) => s.name.startsWith('resourceful_db_pool_'))
    if (api.db.pools().length === 0) return void t.same(pool, [], 'no pool, no gauge')
    const primary = (name: string) => valueOf(all, `resourceful_db_pool_${name}`, { pool: 'primary' })!
    t.equal(primary('max_connections'), 10)
    t.ok(primary('connections') >= 1, 'the requests opened a connection')
    t.ok(primary('idle_connections') <= primary('connections'))
    t.equal(primary('waiting_requests'), 0)
    t.notOk(pool.some((s) => s.labels.pool === 'replica'), 'no replica, no replica pool')
  }),
)

t.test('read replicas: their pools are counted together, beside the primary', { skip: !databaseKinds().includes('postgres') && 'needs PostgreSQL' }, async (t) => {
  const database = await createTestDatabase('postgres')
  const config = database.config as Extract<typeof database.config, { kind: 'postgres' }>
  const db = await openDatabase({ ...config, replicaUrls: [config.url, config.url] })
  await migrate(db)
  const app = await buildApp(testConfig({ database: config, migrateOnStart: false }), { database: db })
  t.teardown(async () => {
    await app.close()
    await db.close()
    await database.drop()
  })
  t.equal((await app.inject({ method: 'GET', url: `${V1}/products` })).statusCode, 200, 'a read, on a replica')
  const all = samples((await app.inject({ method: 'GET', url: '/metrics' })).body)
  t.equal(valueOf(all, 'resourceful_db_pool_max_connections', { pool: 'replica' }), 20, 'two replicas of 10')
  t.equal(valueOf(all, 'resourceful_db_pool_max_connections', { pool: 'primary' }), 10)
  t.ok(valueOf(all, 'resourceful_db_pool_connections', { pool: 'replica' })! >= 1)
})

// GET /livez and /readyz (application/health+json): ready once started and migrated, not while
// starting or shutting down; the API waits for the start too (LIM-10).
import t, { type Test } from 'tap'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
import { eachDatabase, testConfig, V1, type Response } from '../helpers/api.js'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'

function assertHealth(t: Test, res: Response<any>, status: number, health: 'pass' | 'fail') {
  t.equal(res.status, status, `${status}`)
  t.equal(res.headers.get('content-type'), 'application/health+json; charset=utf-8')
  t.equal(res.headers.get('cache-control'), 'no-store')
  t.equal(res.body.status, health)
}

t.test('a started instance is live and ready; HEAD too; the API is served', (t) =>
  eachDatabase(t, async (t, api) => {
    assertHealth(t, await api.anonymous.get('/livez'), 200, 'pass')
    const ready = await api.anonymous.get('/readyz')
    assertHealth(t, ready, 200, 'pass')
    t.same(ready.body.checks, { 'database:connection': [{ status: 'pass' }], 'database:migrations': [{ status: 'pass' }] })
    t.equal((await api.anonymous.request('HEAD', '/readyz')).status, 200)
    t.equal((await api.anonymous.request('POST', '/readyz')).status, 405, 'probes are read-only')
    t.equal(api.app.lifecycle.phase, 'ready')
  }),
)

t.test('shutting down: /readyz is 503 so the balancer stops sending traffic; /livez stays 200', (t) =>
  eachDatabase(t, async (t, api) => {
    api.app.lifecycle.phase = 'stopping'
    const ready = await api.anonymous.get('/readyz')
    assertHealth(t, ready, 503, 'fail')
    t.equal(ready.body.output, 'shutting down')
    assertHealth(t, await api.anonymous.get('/livez'), 200, 'pass')
    t.equal((await api.anonymous.get(`${V1}/products`)).status, 200, 'requests that still arrive are served')
    api.app.lifecycle.phase = 'ready'
  }),
)

t.test('starting: /readyz and the API are 503 until migrations are done; a database still missing migrations is not ready', async (t) => {
  for (const kind of databaseKinds()) {
    const database = await createTestDatabase(kind)
    const db = await openDatabase(database.config)
    t.teardown(async () => {
      await db.close()
      await database.drop()
    })
    const app = await buildApp(testConfig({ database: database.config, migrateOnStart: false }), { database: db, start: 'later' })
    t.teardown(() => app.close())
    const starting = await app.inject({ method: 'GET', url: '/readyz' })
    t.equal(starting.statusCode, 503, `${kind}: not ready while starting`)
    t.same(starting.json(), { status: 'fail', output: 'starting: applying migrations' })
    t.equal((await app.inject({ method: 'GET', url: '/livez' })).statusCode, 200, `${kind}: live`)
    const api = await app.inject({ method: 'GET', url: `${V1}/products` })
    t.equal(api.statusCode, 503, `${kind}: the API waits`)
    t.equal(api.json().error.code, 'SERVICE_UNAVAILABLE')
    t.equal(api.headers['retry-after'], '5')

    // MIGRATE_ON_START=false on an empty database: started, but not ready until migrated.
    await app.start()
    const unmigrated = await app.inject({ method: 'GET', url: '/readyz' })
    t.equal(unmigrated.statusCode, 503, `${kind}: pending migrations`)
    t.equal(unmigrated.json().checks['database:migrations'][0].status, 'fail')
    t.match(unmigrated.json().checks['database:migrations'][0].output, /^pending: \d{14}_init/)
    await migrate(db)
    t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, `${kind}: migrated elsewhere, then ready`)
  }
})

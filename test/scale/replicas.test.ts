// Read replicas (DATABASE_REPLICA_URLS): item and list reads go to a real streaming replica;
// writes, preconditions, what follows a write, authentication and the change feed use the
// primary. The replica's replay is paused to tell the two apart: what it has not replayed, a read
// from it cannot see.
import t from 'tap'
import { missingReplication, startReplication } from '../helpers/replication.js'
import { adminCookie, adminToken, sendJson as send, started } from '../helpers/service-process.js'
import { until } from '../helpers/until.js'

const V1 = '/api/v1'

t.test('reads go to the replica; writes, preconditions, sign-in and the change feed to the primary', { skip: missingReplication() }, async (t) => {
  const replication = await startReplication(t)
  const service = await started(t, { DATABASE_URL: replication.primaryUrl, DATABASE_REPLICA_URLS: replication.replicaUrl })
  const { origin } = service
  // Issued right after sign-in: the new session is looked up on the primary.
  const admin = { authorization: `Bearer ${await adminToken(origin)}` }

  const first = await send('POST', `${origin}${V1}/products`, { name: 'Replicated', sku: 'REPL-1', price: 1 }, admin)
  const { id: firstId } = (await first.json()) as { id: string }
  await until('the replica to have the first product', async () => ((await fetch(`${origin}${V1}/products/${firstId}`)).status === 200 ? true : undefined))

  await replication.onReplica('SELECT pg_wal_replay_pause()')
  const second = await send('POST', `${origin}${V1}/products`, { name: 'Primary only', sku: 'REPL-2', price: 2 }, admin)
  t.equal(second.status, 201, 'a write goes to the primary')
  const { id } = (await second.json()) as { id: string }
  t.equal((await fetch(`${origin}${V1}/products/${id}`)).status, 404, 'an item read comes from the replica, which has not replayed it')
  const list = await fetch(`${origin}${V1}/products`)
  t.equal(list.headers.get('x-total-count'), '1', 'and so does a list')

  const changed = await send('PATCH', `${origin}${V1}/products/${id}`, { stock: 7 }, { ...admin, 'if-match': second.headers.get('etag')! })
  t.equal(changed.status, 200, 'a precondition is checked on the primary, which has the item')
  t.equal(((await changed.json()) as { stock: number }).stock, 7, 'and the answer reads the write it follows')

  const cookie = await adminCookie(origin)
  t.equal((await fetch(`${origin}${V1}/sessions/current`, { headers: { cookie } })).status, 200, 'a session made now works at once')
  const events = (await (await fetch(`${origin}${V1}/events?type=products.created`, { headers: admin })).json()) as { data: { id: string } }[]
  t.ok(events.some((event) => event.data.id === id), 'the change feed reads the primary')

  await replication.onReplica('SELECT pg_wal_replay_resume()')
  await until('the replica to replay the second product', async () => ((await fetch(`${origin}${V1}/products/${id}`)).status === 200 ? true : undefined))
  t.pass('once replayed, the replica serves it')

  replication.stopReplica()
  const fallback = await fetch(`${origin}${V1}/products/${id}`)
  t.equal(fallback.status, 200, 'a replica that is down: the read runs on the primary')
  t.equal((await fetch(`${origin}${V1}/products`)).headers.get('x-total-count'), '2')
})

// Read replicas (DATABASE_REPLICA_URLS): item and list reads go to a real streaming replica;
// writes, preconditions, what follows a write, authentication and the change feed use the
// primary, and a caller's reads after their write, on every instance, until the replica has
// replayed it. The replica's replay is paused to tell the two apart: what it has not replayed, a
// read from it cannot see.
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import t from 'tap'
import { missingReplication, startReplication } from '../helpers/replication.js'
import { adminCookie, adminToken, sendJson as send, started } from '../helpers/service-process.js'
import { until } from '../helpers/until.js'

const V1 = '/api/v1'

const redis = await new Promise<boolean>((resolve) => {
  const socket = connect(6379, '127.0.0.1', () => (socket.end(), resolve(true)))
  socket.on('error', () => resolve(false))
})

t.test('reads go to the replica; writes, preconditions, sign-in and the change feed to the primary; a caller reads their own writes', { skip: missingReplication() ?? (!redis && 'needs Redis on 127.0.0.1:6379') }, async (t) => {
  const replication = await startReplication(t)
  // Two instances sharing Redis, where a caller's last write position is kept.
  const env = {
    DATABASE_URL: replication.primaryUrl,
    DATABASE_REPLICA_URLS: replication.replicaUrl,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `replicas-${randomBytes(6).toString('hex')}:`,
  }
  const [service, another] = await Promise.all([started(t, env), started(t, env)])
  const { origin } = service
  // Issued right after sign-in: the new session is looked up on the primary.
  const admin = { authorization: `Bearer ${await adminToken(origin)}` }

  const first = await send('POST', `${origin}${V1}/products`, { name: 'Replicated', sku: 'REPL-1', price: 1 }, admin)
  const { id: firstId } = (await first.json()) as { id: string }
  await until('the replica to have the first product', async () => ((await fetch(`${origin}${V1}/products/${firstId}`)).status === 200 ? true : undefined))

  // The instance follows the event log once lists are read: its list tags say how far (`@<horizon>.`).
  const horizonOf = (tag: string) => BigInt(/@(\d+)\./.exec(tag)![1]!)
  const listTag = async (headers: Record<string, string> = {}) => (await fetch(`${origin}${V1}/products`, { headers })).headers.get('etag')!
  await until('the instance to follow the event log', async () => (horizonOf(await listTag()) > 0n ? true : undefined))

  await replication.onReplica('SELECT pg_wal_replay_pause()')
  const second = await send('POST', `${origin}${V1}/products`, { name: 'Primary only', sku: 'REPL-2', price: 2 }, admin)
  t.equal(second.status, 201, 'a write goes to the primary')
  const { id } = (await second.json()) as { id: string }
  t.equal((await fetch(`${origin}${V1}/products/${id}`)).status, 404, 'an item read comes from the replica, which has not replayed it')
  const list = await fetch(`${origin}${V1}/products`)
  t.equal(list.headers.get('x-total-count'), '1', 'and so does a list')
  // A page read on the lagging replica is tagged with how far the log had been read at what the
  // replica has, not at what the primary has: revalidated later, it is read again.
  const primaryTag = await until('the instance to read the log past the write', async () => {
    const tag = await listTag(admin)
    return horizonOf(tag) > horizonOf(list.headers.get('etag')!) ? tag : undefined
  })
  const replicaTag = await listTag()
  t.ok(horizonOf(replicaTag) < horizonOf(primaryTag), 'the replica’s page is tagged as of what it has')
  // Whoever wrote it reads it: from the primary, on every instance, while the replica lags.
  for (const at of [origin, another.origin]) {
    t.equal((await fetch(`${at}${V1}/products/${id}`, { headers: admin })).status, 200, `the writer reads its item at once (${at === origin ? 'this' : 'another'} instance)`)
    t.equal((await fetch(`${at}${V1}/products`, { headers: admin })).headers.get('x-total-count'), '2', 'and its list')
  }

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
  const revalidated = await fetch(`${origin}${V1}/products`, { headers: { 'if-none-match': replicaTag } })
  t.equal(revalidated.status, 200, 'the page read on the lagging replica is not current')
  t.equal(revalidated.headers.get('x-total-count'), '2')

  // Once the replica has the writer's writes, the writer's reads go back to it: a user who
  // registers (nobody's write) while the replay is paused is not there yet, for the writer too.
  await replication.onReplica('SELECT pg_wal_replay_pause()')
  const registered = await send('POST', `${origin}${V1}/users`, { email: 'late@shop.test', name: 'Late', password: 'a long enough password' })
  t.equal(registered.status, 201)
  const { id: userId } = (await registered.json()) as { id: string }
  const replayedAll = await until('the writer\u2019s reads to go back to the replica', async () => ((await fetch(`${another.origin}${V1}/users/${userId}`, { headers: admin })).status === 404 ? true : undefined))
  t.ok(replayedAll, 'their reads are the replica\u2019s again')
  await replication.onReplica('SELECT pg_wal_replay_resume()')

  replication.stopReplica()
  const fallback = await fetch(`${origin}${V1}/products/${id}`)
  t.equal(fallback.status, 200, 'a replica that is down: the read runs on the primary')
  t.equal((await fetch(`${origin}${V1}/products`)).headers.get('x-total-count'), '2')
})

// Rate limits per caller with the IETF draft's fields, in memory or shared in Redis across
// instances; sign-in throttling shared too; Redis away: the service keeps serving (LIM-04..07).
import { createServer, connect, type Server, type Socket } from 'node:net'
import t, { type Test } from 'tap'
import { loadConfig, type Config } from '../../src/config.js'
import { startApi, testConfig, V1, type Response } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'

const REDIS = 'redis://127.0.0.1:6379'
const kind = databaseKinds()[0]!
const postgres = databaseKinds().includes('postgres')

/** Whether a Redis answers on 127.0.0.1:6379; in CI it must (.ci/run starts one). */
const redis = await new Promise<boolean>((resolve) => {
  const socket = connect(6379, '127.0.0.1', () => (socket.end(), resolve(true)))
  socket.on('error', () => resolve(false))
})
if (!redis && process.env.CI === 'true') throw new Error('CI needs Redis on 127.0.0.1:6379')
const noRedis = !redis && 'no Redis on 127.0.0.1:6379'

/** Limits of `anonymous` and `authenticated` requests a minute, everything else as in tests. */
function limited(anonymous: number, authenticated: number, extra: Partial<Config> = {}): Partial<Config> {
  return { limits: { ...testConfig().limits, rateLimit: { anonymous, authenticated, exempt: [] } }, ...extra }
}

/** The RateLimit field's parameters: `"default";r=4;t=60` -> { r: 4, t: 60 }. */
function rateLimit(res: Response): { r: number; t: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '')
  return { r: Number(match?.[1] ?? NaN), t: Number(match?.[2] ?? NaN) }
}

function assertLimited(t: Test, res: Response<any>, quota: number) {
  t.equal(res.status, 429, '429')
  t.equal(res.body.error.code, 'RATE_LIMITED')
  t.same(res.body.error.details, [])
  t.equal(res.headers.get('cache-control'), 'no-store', 'RFC 6585 §4: never cached')
  t.equal(res.headers.get('ratelimit-policy'), `"default";q=${quota};w=60`)
  const { r, t: reset } = rateLimit(res)
  t.equal(r, 0, 'nothing remains')
  t.ok(reset >= 1 && reset <= 60, 'seconds to the reset')
  t.ok(Number(res.headers.get('retry-after')) >= reset, 'RL §6: Retry-After no earlier than the reset')
}

t.test('every answer carries RateLimit-Policy and RateLimit; r falls with each request (LIM-05)', async (t) => {
  const api = await startApi(t, kind, undefined, { config: limited(5, 8) })
  const answers = [
    await api.anonymous.get(`${V1}/products`),
    await api.anonymous.get(`${V1}/products/nope`),
    await api.anonymous.get(`${V1}/tokens`),
    await api.anonymous.post(`${V1}/products`, '{broken'),
  ]
  t.same(answers.map((res) => res.status), [200, 404, 401, 400])
  for (const res of answers) t.equal(res.headers.get('ratelimit-policy'), '"default";q=5;w=60', `${res.status}: the policy`)
  t.same(answers.map((res) => rateLimit(res).r), [4, 3, 2, 1], 'one quota for the address, whatever was asked')
  const user = await api.newUser()
  const signedIn = await user.api.get(`${V1}/products`)
  t.equal(signedIn.headers.get('ratelimit-policy'), '"default";q=8;w=60', 'a signed-in caller has the larger quota')
  t.equal(rateLimit(signedIn).r, 7, 'counted apart from the address')
  const live = await api.anonymous.get('/livez')
  t.equal(live.headers.get('ratelimit'), null, 'health probes are not counted')
})

t.test('beyond the quota: 429 with Retry-After, per caller (LIM-04, LIM-06, LIM-07)', async (t) => {
  const api = await startApi(t, kind, undefined, { config: limited(3, 4) })
  const user = await api.newUser()
  for (let i = 0; i < 4; i++) t.equal((await user.api.get(`${V1}/products`)).status, 200)
  assertLimited(t, await user.api.get(`${V1}/products`), 4)
  assertLimited(t, await user.api.post(`${V1}/orders`, {}), 4)
  t.equal((await api.newUser().then((other) => other.api.get(`${V1}/products`))).status, 200, 'another user is not limited')
  t.equal((await api.anonymous.get(`${V1}/products`)).status, 200, 'nor is the address, anonymously')
})

t.test('tokens that do not work are counted by address: 429 comes before 401 (order of checks)', async (t) => {
  const api = await startApi(t, kind, undefined, { config: limited(3, 100) })
  const guesses = []
  for (let i = 0; i < 4; i++) guesses.push(await api.as({ authorization: `Bearer rf_token_guess${i}` }).get(`${V1}/products`))
  t.same(guesses.map((res) => res.status), [401, 401, 401, 429])
  assertLimited(t, guesses[3]!, 3)
})

t.test('loopback is exempt by default: no quota, no RateLimit fields; RATE_LIMIT_EXEMPT names other addresses', async (t) => {
  const defaults = await startApi(t, kind, undefined, { config: { limits: { ...testConfig().limits, rateLimit: { ...loadConfig({}).limits.rateLimit, anonymous: 2 } } } })
  const answers = await Promise.all([1, 2, 3, 4].map(() => defaults.anonymous.get(`${V1}/products`)))
  t.same(answers.map((res) => res.status), [200, 200, 200, 200], 'the machine itself is not limited')
  t.equal(answers[0]!.headers.get('ratelimit'), null, 'no quota applies, so none is stated')
  const other = await startApi(t, kind, undefined, { config: limited(2, 2, { limits: { ...testConfig().limits, rateLimit: { anonymous: 2, authenticated: 2, exempt: ['10.0.0.0/8', '::2'] } } }) })
  const statuses = []
  for (let i = 0; i < 3; i++) statuses.push((await other.anonymous.get(`${V1}/products`)).status)
  t.same(statuses, [200, 200, 429], 'loopback is limited once the list leaves it out')
})

t.test('behind a trusted proxy (TRUST_PROXY) the client is the X-Forwarded-For address; from anyone else the header is ignored', async (t) => {
  const trusted = await startApi(t, kind, undefined, { config: limited(2, 2, { trustProxy: ['127.0.0.1', '::1'] }) })
  const from = (address: string) => trusted.as({ 'x-forwarded-for': address })
  const first = []
  for (let i = 0; i < 3; i++) first.push((await from('203.0.113.7').get(`${V1}/products`)).status)
  t.same(first, [200, 200, 429], 'one client behind the proxy has its own quota')
  t.equal((await from('203.0.113.8').get(`${V1}/products`)).status, 200, 'another client behind the same proxy is not limited by the first')
  const exemptBehind = await startApi(t, kind, undefined, { config: { trustProxy: ['127.0.0.1', '::1'], limits: { ...testConfig().limits, rateLimit: { anonymous: 1, authenticated: 1, exempt: ['127.0.0.0/8'] } } } })
  const spoofed = await exemptBehind.as({ 'x-forwarded-for': '203.0.113.9' }).get(`${V1}/products`)
  t.match(spoofed.headers.get('ratelimit'), /^"default";r=0;/, 'the forwarded client is counted, though the proxy itself is exempt')

  const untrusted = await startApi(t, kind, undefined, { config: limited(2, 2) })
  const statuses = []
  for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) statuses.push((await untrusted.as({ 'x-forwarded-for': address }).get(`${V1}/products`)).status)
  t.same(statuses, [200, 200, 429], 'a client cannot escape its quota by naming another address')
})

t.test('two instances sharing Redis count against one quota; sign-in throttling too (STATE-13)', { skip: (!postgres && 'needs PostgreSQL') || noRedis }, async (t) => {
  const prefix = `test-shared-${process.pid}-${Date.now()}:`
  const shared = limited(4, 5, { redisUrl: REDIS, redisKeyPrefix: prefix })
  const a = await startApi(t, 'postgres', undefined, { config: shared })
  const b = await startApi(t, 'postgres', undefined, { config: shared, besides: a })
  const user = await a.newUser()
  const onB = b.as({ authorization: `Bearer ${user.token}` })
  const statuses = []
  for (let i = 0; i < 6; i++) statuses.push((await (i % 2 === 0 ? user.api : onB).get(`${V1}/products`)).status)
  t.same(statuses, [200, 200, 200, 200, 200, 429], 'five in all, whichever instance answers')
  t.equal(rateLimit(await a.anonymous.get(`${V1}/products`)).r, 3, 'the address has its own count')
  t.equal(rateLimit(await b.anonymous.get(`${V1}/products`)).r, 2, 'shared across instances too')

  // Sign-in failures: five for one account in all, not five per instance.
  const email = 'nobody@shop.test'
  const big = limited(0, 0, { redisUrl: REDIS, redisKeyPrefix: `${prefix}signin:` })
  const c = await startApi(t, 'postgres', undefined, { config: big, besides: a })
  const d = await startApi(t, 'postgres', undefined, { config: big, besides: a })
  const attempts = []
  for (let i = 0; i < 6; i++) attempts.push((await (i % 2 === 0 ? c : d).post(`${V1}/sessions`, { email, password: `guess ${i}` })).status)
  t.same(attempts, [401, 401, 401, 401, 401, 429])
})

/** A TCP proxy in front of Redis that the test can cut and restore. */
async function redisProxy(t: Test): Promise<{ url: string; cut(): Promise<void>; restore(): Promise<void> }> {
  let server: Server | undefined
  const sockets = new Set<Socket>()
  let port = 0
  const listen = () =>
    new Promise<void>((resolve) => {
      server = createServer((client) => {
        const upstream = connect(6379, '127.0.0.1')
        for (const socket of [client, upstream]) {
          sockets.add(socket)
          socket.on('close', () => sockets.delete(socket))
          socket.on('error', () => socket.destroy())
        }
        client.pipe(upstream).pipe(client)
      })
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port
        resolve()
      })
    })
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server!.close(() => resolve())
    })
  await listen()
  t.teardown(cut)
  return { url: `redis://127.0.0.1:${port}`, cut, restore: listen }
}

t.test('Redis away: the service keeps serving, counts in memory, says so once, and goes back to Redis', { skip: noRedis }, async (t) => {
  const proxy = await redisProxy(t)
  const lines: string[] = []
  const api = await startApi(t, kind, undefined, {
    config: limited(100, 100, { redisUrl: proxy.url }),
    logger: { level: 'info', stream: { write: (line: string) => void lines.push(line) } },
  })
  t.equal(rateLimit(await api.anonymous.get(`${V1}/products`)).r, 99, 'counted in Redis')
  await proxy.cut()
  const during: Response[] = []
  for (let i = 0; i < 3; i++) during.push(await api.anonymous.get(`${V1}/products`))
  t.same(during.map((res) => res.status), [200, 200, 200], 'still serving')
  t.same(during.map((res) => rateLimit(res).r), [99, 98, 97], 'counted in memory meanwhile')
  t.equal(lines.filter((line) => line.includes('Redis cannot be reached')).length, 1, 'logged once')
  await proxy.restore()
  // ioredis reconnects by itself; once it has, counting goes on in Redis where it stopped.
  while (!lines.some((line) => line.includes('Redis is back'))) await new Promise((resolve) => setTimeout(resolve, 50))
  t.equal(rateLimit(await api.anonymous.get(`${V1}/products`)).r, 98, 'Redis kept its count')
})

t.test('an unreachable Redis from the start: the service starts and serves', async (t) => {
  const api = await startApi(t, kind, undefined, { config: limited(10, 10, { redisUrl: 'redis://127.0.0.1:1' }) })
  const res = await api.anonymous.get(`${V1}/products`)
  t.equal(res.status, 200)
  t.equal(rateLimit(res).r, 9)
  t.equal((await api.admin.post(`${V1}/products`, productBody())).status, 201)
})

// Throttled sign-ins (OWASP Authentication, "Login Throttling"): per account and per address, 429 with Retry-After.
import t from 'tap'
import { createThrottle } from '../../src/auth/throttle.js'
import { memoryCounters } from '../../src/http/counters.js'
import { startApi, testConfig, V1 } from '../helpers/api.js'
import { databaseKinds } from '../helpers/databases.js'

t.test('a throttle counts failures in a window and forgets them after it', async (t) => {
  let now = 1_000_000
  const counters = memoryCounters(() => now)
  const throttle = createThrottle(counters, 'test', 3, 60_000)
  for (let i = 0; i < 3; i++) {
    t.equal(await throttle.retryAfter('a'), 0)
    await throttle.fail('a')
  }
  t.equal(await throttle.retryAfter('a'), 60, 'blocked for the rest of the window')
  t.equal(await throttle.retryAfter('b'), 0, 'other keys are not')
  now += 30_500
  t.equal(await throttle.retryAfter('a'), 30, 'seconds left, rounded up')
  now += 30_000
  t.equal(await throttle.retryAfter('a'), 0, 'the window ended')
  await throttle.fail('a')
  await throttle.clear('a')
  t.equal(await throttle.retryAfter('a'), 0, 'a success clears the account')
  for (let i = 0; i < 10_050; i++) counters.hit(`spray-${i}`, 60_000)
  now += 120_000
  counters.hit('after', 60_000)
  t.equal(await counters.peek('spray-1'), undefined, 'expired windows go')
})

t.test('sign-ins: five failures for an account, then 429 even with the right password', async (t) => {
  const admin = { email: 'admin@shop.test', password: 'a long admin password' }
  const api = await startApi(t, databaseKinds()[0]!, undefined, { config: { auth: { ...testConfig().auth, admin } } })
  for (let i = 0; i < 5; i++) t.equal((await api.post(`${V1}/sessions`, { ...admin, password: `guess ${i}` })).status, 401)
  const limited = await api.post(`${V1}/sessions`, admin)
  t.equal(limited.status, 429)
  t.equal(limited.body.error.code, 'RATE_LIMITED')
  t.ok(Number(limited.headers.get('retry-after')) > 0 && Number(limited.headers.get('retry-after')) <= 900, 'Retry-After in seconds')
  t.equal((await api.post(`/api/v2/sessions`, admin)).status, 429, 'in every API version')

  // The same address, other accounts: the address limit (20) comes next.
  let status = 0
  let attempts = 5
  while (status !== 429 && attempts < 40) {
    status = (await api.post(`${V1}/sessions`, { email: `nobody${attempts}@shop.test`, password: 'x' })).status
    attempts++
  }
  t.equal(status, 429, 'an address is throttled across accounts')
  t.equal(attempts, 21, 'after twenty failures')
})

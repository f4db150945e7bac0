// The parts of a delivery that need no service: the signature (EVT-11), the retry schedule, and
// where the service refuses to connect (EVT-09: SSRF, at registration and at connect time).
import type { LookupAddress, LookupOptions } from 'node:dns'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { guardedLookup, isPublicAddress, refusedUrl } from '../../src/webhooks/addresses.js'
import { MAX_ATTEMPTS, retryDelay } from '../../src/webhooks/schedule.js'
import { createSender } from '../../src/webhooks/send.js'
import { newWebhookSecret, sign } from '../../src/webhooks/signature.js'

t.test('the signature reproduces the Standard Webhooks test vector byte for byte', async (t) => {
  t.equal(sign('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}'), 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  const secret = newWebhookSecret()
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  t.not(newWebhookSecret(), secret, 'each secret is new')
  const timestamp = Math.floor(Date.now() / 1000)
  const body = JSON.stringify({ type: 'products.created', timestamp: new Date().toISOString(), data: { id: 'x' } })
  const signature = sign(secret, '42', timestamp, body)
  t.equal(signature, new Webhook(secret).sign('42', new Date(timestamp * 1000), body), 'the same as the reference library signs')
  t.same(new Webhook(secret).verify(body, { 'webhook-id': '42', 'webhook-timestamp': String(timestamp), 'webhook-signature': signature }), JSON.parse(body))
})

t.test('retries come after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; then the delivery has failed', async (t) => {
  const base = 5000
  t.same(
    Array.from({ length: MAX_ATTEMPTS }, (_, i) => retryDelay(i + 1, base)),
    [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000, undefined],
  )
  t.equal(retryDelay(1, 50), 50, 'in multiples of the base')
})

t.test('public and private addresses', async (t) => {
  for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) t.ok(isPublicAddress(address), `${address} is public`)
  for (const address of [
    '127.0.0.1', '127.8.9.10', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1',
    '::127.0.0.1', '64:ff9b:1::a00:1', 'fec0::1', '2001:0:4136:e378::1', 'not an address',
  ]) {
    t.notOk(isPublicAddress(address), `${address} is not`)
  }
})

t.test('registration refuses URLs that are not https or that point to private addresses', async (t) => {
  const refused: [string, RegExp][] = [
    ['http://hooks.example.com/', /https/],
    ['ftp://hooks.example.com/', /https/],
    ['https://127.0.0.1/hooks', /not a public address/],
    ['https://10.1.2.3/', /not a public address/],
    ['https://169.254.169.254/latest/meta-data', /not a public address/],
    ['https://[::1]:8443/', /not a public address/],
    ['https://[::ffff:127.0.0.1]/', /not a public address/],
    ['https://localhost/', /localhost/],
    ['https://api.localhost./', /localhost/],
    ['https://user:pw@hooks.example.com/', /user name/],
    ['hooks.example.com', /absolute URL/],
  ]
  for (const [url, reason] of refused) t.match(refusedUrl(url, false), reason, url)
  t.equal(refusedUrl('https://hooks.example.com/stripe?x=1', false), undefined, 'a public name is checked when connecting')
  t.equal(refusedUrl('https://93.184.215.14/', false), undefined)
  t.equal(refusedUrl('http://127.0.0.1:8080/', true), undefined, 'WEBHOOKS_ALLOW_PRIVATE allows http and private addresses')
  t.equal(refusedUrl('ftp://127.0.0.1/', true), 'must be an http or https URL')
})

/** A resolver that answers every name with `addresses`, as a rebinding DNS server would. */
const resolvingTo = (...addresses: string[]) =>
  ((_name: string, _options: LookupOptions, callback: (error: Error | null, addresses: LookupAddress[]) => void) =>
    callback(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))) as never

t.test('at connect time, a name that resolves to a private address reaches nothing (DNS rebinding)', async (t) => {
  let reached = 0
  const server = createServer((_request, response) => {
    reached += 1
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => void server.close())
  const port = (server.address() as AddressInfo).port
  const signal = AbortSignal.timeout(5000)

  // The name passed registration; now it resolves to loopback, where a receiver listens.
  const guarded = createSender(false, guardedLookup(resolvingTo('127.0.0.1')))
  t.teardown(() => guarded.close())
  t.same(await guarded.post(`https://rebound.example.com:${port}/`, {}, '{}', signal), { error: 'rebound.example.com resolves to 127.0.0.1, which is not a public address' })
  const mixed = createSender(false, guardedLookup(resolvingTo('93.184.215.14', '10.0.0.7')))
  t.teardown(() => mixed.close())
  t.same(await mixed.post(`https://rebound.example.com:${port}/`, {}, '{}', signal), { error: 'rebound.example.com resolves to 10.0.0.7, which is not a public address' }, 'one private address among public ones is enough')
  t.same(await guarded.post(`https://127.0.0.1:${port}/`, {}, '{}', signal), { error: '127.0.0.1 is not a public address' }, 'an address in the URL is checked too')
  t.same(await guarded.post(`http://rebound.example.com:${port}/`, {}, '{}', signal), { error: 'Only https URLs are delivered to.' }, 'and the scheme: a URL registered while private ones were allowed')
  t.equal(reached, 0, 'the receiver was never reached')

  // With WEBHOOKS_ALLOW_PRIVATE the same receiver is reached.
  const open = createSender(true)
  t.teardown(() => open.close())
  t.same(await open.post(`http://127.0.0.1:${port}/`, {}, '{}', signal), { status: 200 })
  t.equal(reached, 1)
})

t.test('the guarded lookup answers in both forms a socket asks for', async (t) => {
  const lookup = guardedLookup(resolvingTo('93.184.215.14'))
  const one = await new Promise<unknown[]>((resolve) => lookup('a.example', {}, (...args) => resolve(args)))
  t.same(one, [null, '93.184.215.14', 4])
  const all = await new Promise<unknown[]>((resolve) => lookup('a.example', { all: true }, (...args) => resolve(args)))
  t.same(all, [null, [{ address: '93.184.215.14', family: 4 }]])
  const failing = guardedLookup(((_n: string, _o: LookupOptions, callback: (error: Error) => void) => callback(new Error('ENOTFOUND'))) as never)
  const failed = await new Promise<unknown[]>((resolve) => failing('a.example', {}, (...args) => resolve(args)))
  t.match(failed[0], { message: 'ENOTFOUND' })
})

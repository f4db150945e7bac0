// Address lists from the configuration (TRUST_PROXY, RATE_LIMIT_EXEMPT): networks of both
// families, IPv4 clients of a dual-stack socket, and what is no address at all.
import t from 'tap'
import { addressMatcher } from '../../src/http/address-list.js'

t.test('an address matches the networks listed, IPv4 given either way', async (t) => {
  const matches = addressMatcher(['127.0.0.0/8', '10.1.2.3', 'fd00::/8'])
  t.ok(matches('127.9.9.9'), 'inside a network')
  t.ok(matches('::ffff:127.0.0.1'), 'an IPv4 client of a dual-stack socket')
  t.ok(matches('10.1.2.3'), 'a single address')
  t.notOk(matches('10.1.2.4'))
  t.ok(matches('fd12::1'), 'an IPv6 network')
  t.notOk(matches('::1'), 'loopback is not listed here')
  t.notOk(matches('not an address'))
  t.ok(matches('127.9.9.9'), 'asked again: the same answer')
  t.notOk(addressMatcher([])('127.0.0.1'), 'an empty list matches nothing')
})

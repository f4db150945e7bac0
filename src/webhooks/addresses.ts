/**
 * Where a webhook may deliver (OWASP SSRF prevention): https to public addresses only. A URL is
 * checked when it is registered (its scheme, and a host that is a private address or a name for
 * loopback), and again on every connection against the addresses its name resolves to then, so
 * that a name which resolves elsewhere later (DNS rebinding) reaches nothing private.
 * WEBHOOKS_ALLOW_PRIVATE turns both checks off (tests, receivers on a private network).
 */
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { BlockList, isIP } from 'node:net'

/**
 * Addresses that are not on the public internet (IANA special-purpose registries), one list per
 * family: a BlockList checks an IPv4 address against IPv6 rules too, as IPv4-mapped.
 */
const PRIVATE_V4 = new BlockList()
const PRIVATE_V6 = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata services among them
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and broadcast
] as const) {
  PRIVATE_V4.addSubnet(network, prefix, 'ipv4')
}
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback, and the deprecated IPv4-compatible ::a.b.c.d
  ['::ffff:0:0', 96], // IPv4-mapped: checked as the IPv4 address they carry
  ['64:ff9b::', 96], // NAT64: reaches IPv4 addresses, private ones too
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64],
  ['2001::', 32], // Teredo
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local, deprecated
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE_V6.addSubnet(network, prefix, 'ipv6')
}

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i

/** Whether `address` (an IP address) is on the public internet. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 4) return !PRIVATE_V4.check(address, 'ipv4')
  if (family !== 6) return false
  const mapped = MAPPED_V4.exec(address)
  return mapped ? isPublicAddress(mapped[1]!) : !PRIVATE_V6.check(address, 'ipv6')
}

/** A URL's host as an address, when it is one (`[::1]` → `::1`). */
const literalAddress = (url: URL): string | undefined => {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  return isIP(host) ? host : undefined
}

/** Why the service will not deliver to `url`, or undefined when it will (on registration). */
export function refusedUrl(url: string, allowPrivate: boolean): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'must be an absolute URL'
  }
  if (parsed.username || parsed.password) return 'must not carry a user name or password'
  if (parsed.protocol !== 'https:' && !(allowPrivate && parsed.protocol === 'http:')) return allowPrivate ? 'must be an http or https URL' : 'must be an https URL'
  if (allowPrivate) return undefined
  const address = literalAddress(parsed)
  if (address !== undefined && !isPublicAddress(address)) return `points to ${address}, which is not a public address`
  // RFC 6761: these names are loopback wherever they resolve.
  if (/(^|\.)localhost\.?$/i.test(parsed.hostname)) return 'points to localhost, which is not a public address'
  return undefined
}

/** Thrown for a connection the guard refuses; its message says which address. */
export class RefusedAddress extends Error {
  override name = 'RefusedAddress'
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void
export type Lookup = (hostname: string, options: LookupOptions, callback: LookupCallback) => void

/**
 * A `lookup` for sockets that refuses a name resolving to any address that is not public: the
 * check is made on the addresses the connection will use, so a name cannot pass it and then
 * resolve elsewhere. `resolve` is the system's resolver (tests give their own).
 */
export function guardedLookup(resolve: typeof dnsLookup = dnsLookup): Lookup {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, [])
      const refused = addresses.find((a) => !isPublicAddress(a.address))
      if (refused) return callback(new RefusedAddress(`${hostname} resolves to ${refused.address}, which is not a public address`), [])
      if (options.all) return callback(null, addresses)
      callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}

/** Throws RefusedAddress when `url`'s host is an address that is not public (a socket looks up no address). */
export function checkLiteral(url: URL): void {
  const address = literalAddress(url)
  if (address !== undefined && !isPublicAddress(address)) throw new RefusedAddress(`${address} is not a public address`)
}

/** Lists of addresses and networks from the configuration (`127.0.0.1`, `10.0.0.0/8`, `::1`), matched against a client's address. */
import { BlockList, isIP } from 'node:net'
import { parseNetwork } from '../config.js'

/** Whether an address is in one of `entries` (checked by parseNetwork when the configuration was read). */
export function addressMatcher(entries: readonly string[]): (address: string) => boolean {
  if (entries.length === 0) return () => false
  const list = new BlockList()
  for (const entry of entries) {
    const network = parseNetwork(entry)!
    list.addSubnet(network.address, network.prefix, network.family)
  }
  const check = (address: string) => {
    // A dual-stack socket gives IPv4 clients as IPv4-mapped IPv6 (::ffff:127.0.0.1).
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address
    const version = isIP(plain)
    return version !== 0 && list.check(plain, version === 4 ? 'ipv4' : 'ipv6')
  }
  // Asked on every request, mostly about the same few addresses: a BlockList check (it builds a
  // SocketAddress) was 3% of a product read's CPU. Bounded: emptied when full.
  const known = new Map<string, boolean>()
  return (address) => {
    let found = known.get(address)
    if (found === undefined) {
      if (known.size >= 10_000) known.clear()
      known.set(address, (found = check(address)))
    }
    return found
  }
}

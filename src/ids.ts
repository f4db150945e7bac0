/** Server-made item ids: UUIDv7 (RFC 9562), time-ordered so the primary key index stays compact. */
import { randomFillSync } from 'node:crypto'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True for any well-formed UUID; anything else in an id position is answered like an unknown id. */
export const isUuid = (value: string): boolean => UUID.test(value)

const bytes = Buffer.alloc(16)
/** Random bytes drawn 4 KiB at a time: one system call per 512 ids instead of one per id. */
const pool = Buffer.alloc(4096)
let poolOffset = pool.length
let lastMs = 0
let counter = 0

function randomInto(target: Buffer, start: number, length: number): void {
  if (poolOffset + length > pool.length) {
    randomFillSync(pool)
    poolOffset = 0
  }
  pool.copy(target, start, poolOffset, poolOffset + length)
  poolOffset += length
}

/**
 * A new UUIDv7: 48 bits of Unix milliseconds, a 12-bit counter, then 62 random bits
 * (RFC 9562 §5.7, §6.2 method 1). The counter starts at a random value each millisecond and
 * increments within it, so ids made by this process sort in creation order.
 */
export function uuidv7(): string {
  randomInto(bytes, 6, 10)
  let now = Date.now()
  if (now > lastMs) {
    lastMs = now
    counter = bytes.readUInt16BE(6) & 0x7ff
  } else if (++counter > 0xfff) {
    // 4,096 ids in one millisecond: borrow the next one.
    lastMs += 1
    counter = 0
  }
  now = lastMs
  bytes.writeUIntBE(now, 0, 6)
  bytes.writeUInt16BE(0x7000 | counter, 6)
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

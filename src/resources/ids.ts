/** Server-made item ids: UUIDv7 (RFC 9562), time-ordered so the primary key index stays compact. */
import { randomFillSync } from 'node:crypto'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** True for any well-formed UUID; anything else in an id position is answered like an unknown id. */
export const isUuid = (value: string): boolean => UUID.test(value)

const bytes = Buffer.alloc(16)

/** A new UUIDv7: 48 bits of Unix milliseconds, then 74 random bits (RFC 9562 §5.7). */
export function uuidv7(): string {
  randomFillSync(bytes, 6, 10)
  bytes.writeUIntBE(Date.now(), 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

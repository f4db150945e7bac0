/**
 * The secrets behind sessions and tokens: 256 random bits shown to the client once; the database
 * keeps only their SHA-256, so a copy of it lets nobody in.
 */
import { createHash, randomBytes } from 'node:crypto'

/** A new secret with a prefix that says what it is (`rf_session_`, `rf_token_`), as GitHub's do. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`
}

/** What is stored and looked up: hex SHA-256. A fast hash is right here: the secret has 256 bits. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex')
}

/**
 * Standard Webhooks 1.0 signing ("Signature scheme"): the secret is `whsec_` and the base64 of its
 * key; a signature is `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`.
 */
import { createHmac, randomBytes } from 'node:crypto'

export const SECRET_PREFIX = 'whsec_'

/** A new secret: 32 random bytes, as the Standard Webhooks libraries make them. */
export const newWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString('base64')

/** The `webhook-signature` of a delivery. */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

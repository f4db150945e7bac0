/** The Prefer request header (RFC 7240): the client's optional wishes, honoured or ignored. */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { appendHeader } from './response-headers.js'

/**
 * The preferences of a request, lower-cased names to values (`''` for a bare token), from every
 * Prefer field. Parameters after `;` are ignored, and so are preferences this service does not
 * know (RFC 7240 §2); the first of a repeated name counts.
 */
export function preferences(request: FastifyRequest): ReadonlyMap<string, string> {
  const header = request.headers.prefer
  const found = new Map<string, string>()
  if (header === undefined) return found
  for (const item of [header].flat().join(',').split(',')) {
    const [pair = ''] = item.split(';')
    const at = pair.indexOf('=')
    const name = (at < 0 ? pair : pair.slice(0, at)).trim().toLowerCase()
    const value = at < 0 ? '' : pair.slice(at + 1).trim().replace(/^"(.*)"$/, '$1')
    if (name !== '' && !found.has(name)) found.set(name, value)
  }
  return found
}

/** Says which preference was honoured (RFC 7240 §3); a response that depends on Prefer varies by it. */
export function preferenceApplied(reply: FastifyReply, preference: string): void {
  reply.header('preference-applied', preference)
}

/** Responses whose content may depend on Prefer: a shared cache must key on it (RFC 7240 §2). */
export const varyByPrefer = (reply: FastifyReply) => appendHeader(reply, 'vary', 'Prefer')

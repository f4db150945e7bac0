/** The rule that keeps every generated request from changing stored data, and says how. */
import type { BadRequest } from './requests.js'
import { FOREIGN_ORIGINS } from './values.js'

/** An If-Match that cannot hold: not `*` alone, and no tag this service makes (`"v1.…"`; list tags are never on writes). */
const failsIfMatch = (value: string) => value.trim() !== '*' && !/"v\d+\./.test(value)

/** The path with ASCII percent-escapes undone (twice: the router decodes once, be safe), lower-cased. */
function decodedPath(path: string): string {
  let text = path
  for (let i = 0; i < 2; i++) text = text.replace(/%([0-7][0-9a-f])/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
  return text.toLowerCase()
}

/**
 * Makes sure a request changes nothing, and says how:
 * - POST, PUT, PATCH: a poisoned or huge body fails validation (or parsing, or the size limit)
 *   whatever else the request has; no body at all is a 400. A `taken` create repeats a unique
 *   value stored for its caller: at best it reaches the insert, which fails whole (409); garbage
 *   headers can only take its credentials away. A plausible body, which may be valid,
 *   is only sent by PUT and PATCH, with an If-Match that cannot hold (412): the precondition is
 *   checked before anything is written, and every If-Match header sent must fail.
 * - DELETE of a path that names a stored item in any spelling: the same If-Match (412). Other
 *   DELETEs name nothing stored (404). A cookie-signed DELETE of /sessions/current would sign
 *   out: it comes from a foreign origin (403, CSRF).
 * - Wire requests never name a stored item, and write only poisoned bodies.
 * - Every other method writes nothing on any route.
 */
export function guard(request: BadRequest, realIds: readonly string[]): BadRequest {
  const method = request.method.toUpperCase()
  const headers = [...request.headers]
  const path = decodedPath(request.path)
  const namesStored = realIds.some((id) => path.includes(id))
  if (request.wire) {
    if (realIds.some((id) => request.wire!.bytes.toString('latin1').toLowerCase().includes(id))) throw new Error('a wire request names a stored item')
    return { ...request, guarantee: 'names nothing stored; bodies poisoned' }
  }
  const ifMatches = () => headers.filter(([name]) => name.toLowerCase() === 'if-match')
  const requireFailingIfMatch = () => {
    if (ifMatches().length > 0 && ifMatches().every(([, value]) => failsIfMatch(value))) return
    for (const header of ifMatches()) headers.splice(headers.indexOf(header), 1)
    headers.push(['if-match', '"never-a-version"'])
  }
  let guarantee = 'not a write'
  if (['POST', 'PUT', 'PATCH'].includes(method)) {
    if (request.body?.kind === 'plausible') {
      if (method === 'POST') throw new Error('a POST with a plausible body')
      requireFailingIfMatch()
      guarantee = 'If-Match cannot hold (412)'
    } else if (request.body?.kind === 'taken') {
      if (method !== 'POST' || request.caller !== request.body.caller) throw new Error('a taken value sent otherwise than as a create by its caller')
      guarantee = 'a unique value already stored (409)'
    } else {
      guarantee = request.body ? `${request.body.kind} body` : 'no body (400)'
    }
  } else if (method === 'DELETE') {
    if (namesStored) {
      requireFailingIfMatch()
      guarantee = 'If-Match cannot hold (412)'
    } else guarantee = 'names nothing stored (404)'
    if (request.caller === 'session' && path.includes('/sessions/')) {
      for (const header of headers.filter(([name]) => /^(origin|referer)$/i.test(name))) headers.splice(headers.indexOf(header), 1)
      headers.push(['origin', FOREIGN_ORIGINS[0]])
      guarantee += '; cookie from a foreign origin (403)'
    }
  }
  return { ...request, headers, guarantee }
}

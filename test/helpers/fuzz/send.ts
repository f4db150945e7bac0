/** Sends a generated request over real HTTP: fetch for most, a bare socket for what fetch refuses or rewrites. */
import { sendRaw, type RawOutcome } from '../raw-http.js'
import { hugeBytes } from './bodies.js'
import type { BadRequest } from './requests.js'
import type { CallerName } from './shop.js'

/** Each caller's credential header; none for anonymous. */
export type Credentials = Record<CallerName, [string, string] | undefined>

/** An answer, or why there was none. */
export type Outcome = { status: number; type: string | undefined; body: string } | { failure: 'closed' | 'timeout' | 'network'; detail: string }

/** One request's time bound; no answer by then is a failure. */
const ANSWER_TIMEOUT_MS = 15_000

export function bodyBytes(request: BadRequest): Buffer | undefined {
  const body = request.body
  if (!body) return undefined
  return body.kind === 'huge' ? hugeBytes(body) : body.bytes
}

/** The caller's credentials, unless a generated header replaces them, then the generated headers. */
function headersOf(request: BadRequest, credentials: Credentials): [string, string][] {
  const own = credentials[request.caller]
  const replaced = own && request.headers.some(([name]) => name.toLowerCase() === own[0])
  return [...(own && !replaced ? [own] : []), ...request.headers]
}

/** The request as bytes: its own for wire requests, else built from its parts. */
function wireBytes(request: BadRequest, credentials: Credentials, host: string): Buffer {
  if (request.wire) return request.wire.bytes
  const body = bodyBytes(request)
  // Latin-1 bytes as written; a text beyond Latin-1 as UTF-8.
  const encoded = (text: string) => Buffer.from(text, [...text].some((c) => c.charCodeAt(0) > 0xff) ? 'utf8' : 'latin1')
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `Host: ${host}`, ...headersOf(request, credentials).map(([n, v]) => `${n}: ${v}`), 'Connection: close']
  if (body) lines.push(`Content-Length: ${body.length}`)
  return Buffer.concat([encoded(`${lines.join('\r\n')}\r\n\r\n`), body ?? Buffer.alloc(0)])
}

function fromRaw(outcome: RawOutcome): Outcome {
  if (outcome.kind !== 'answer') return { failure: outcome.kind, detail: JSON.stringify(outcome.received.toString('latin1').slice(0, 200)) }
  const { status, headers, body } = outcome.answer
  return { status, type: headers['content-type'], body: body.toString('utf8') }
}

/** The fetch Request, or undefined when fetch refuses one (TRACE, CONNECT, a body on GET, a header it cannot hold). */
function fetchRequest(origin: string, request: BadRequest, credentials: Credentials): Request | undefined {
  try {
    return new Request(origin + request.path, { method: request.method, headers: headersOf(request, credentials), body: bodyBytes(request), redirect: 'manual' })
  } catch {
    return undefined
  }
}

/** Sends the request and reads the whole answer; redirects are answers, not followed. */
export async function send(origin: string, request: BadRequest, credentials: Credentials): Promise<Outcome> {
  const prepared = request.transport === 'fetch' ? fetchRequest(origin, request, credentials) : undefined
  if (!prepared) {
    const head = request.method.toUpperCase() === 'HEAD'
    return fromRaw(await sendRaw(origin, wireBytes(request, credentials, new URL(origin).host), { head, timeoutMs: ANSWER_TIMEOUT_MS }))
  }
  try {
    const res = await fetch(prepared, { signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) })
    return { status: res.status, type: res.headers.get('content-type') ?? undefined, body: await res.text() }
  } catch (error) {
    const failure = (error as Error).name === 'TimeoutError' ? 'timeout' : 'network'
    return { failure, detail: `${(error as Error).message} ${String((error as { cause?: unknown }).cause ?? '')}` }
  }
}

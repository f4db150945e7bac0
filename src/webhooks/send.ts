/**
 * One delivery attempt over HTTP: a POST, its answer's status, its body read and dropped.
 * Redirects are not followed (a 3xx fails the attempt): a receiver must not lead the service
 * somewhere it was not registered.
 */
import http from 'node:http'
import https from 'node:https'
import { checkLiteral, guardedLookup, type Lookup } from './addresses.js'

/** What an attempt came to: the receiver's status, or why there was none. */
export type Outcome = { status: number } | { error: string }

/** The longest part of a receiver's answer that is read; the rest is dropped with the connection. */
const MAX_ANSWER_BYTES = 64 * 1024

export interface Sender {
  post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<Outcome>
  /** Closes the kept-alive connections. */
  close(): void
}

/** `allowPrivate`: connect wherever a URL points (WEBHOOKS_ALLOW_PRIVATE). */
export function createSender(allowPrivate: boolean, lookup: Lookup = guardedLookup()): Sender {
  // Connections are kept for the next delivery to the same receiver; each was checked when it opened.
  const options = { keepAlive: true, maxSockets: 8, ...(allowPrivate ? {} : { lookup }) }
  const agents = { 'http:': new http.Agent(options), 'https:': new https.Agent(options) }

  return {
    post(url, headers, body, signal) {
      return new Promise<Outcome>((resolve) => {
        const target = new URL(url)
        // A webhook registered while WEBHOOKS_ALLOW_PRIVATE was on keeps its URL: checked again here.
        if (!allowPrivate && target.protocol !== 'https:') return resolve({ error: 'Only https URLs are delivered to.' })
        try {
          if (!allowPrivate) checkLiteral(target)
        } catch (error) {
          return resolve({ error: (error as Error).message })
        }
        const client = target.protocol === 'https:' ? https : http
        const request = client.request(
          target,
          { method: 'POST', agent: agents[target.protocol as keyof typeof agents], headers: { ...headers, 'content-length': Buffer.byteLength(body) }, signal },
          (response) => {
            let read = 0
            response.on('data', (chunk: Buffer) => {
              read += chunk.length
              if (read > MAX_ANSWER_BYTES) response.destroy()
            })
            response.on('close', () => resolve({ status: response.statusCode! }))
            response.on('error', () => resolve({ status: response.statusCode! }))
          },
        )
        request.on('error', (error) => resolve({ error: error.message }))
        request.end(body)
      })
    },
    close() {
      agents['http:'].destroy()
      agents['https:'].destroy()
    },
  }
}

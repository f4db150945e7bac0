/** A webhook receiver on a loopback port: records what it is sent and answers as a test tells it. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'

export interface Received {
  headers: IncomingHttpHeaders
  body: string
  /** The `webhook-id` header. */
  id: string
}

/** How the receiver answers a request: a status, or `hang` (never answer; the connection stays open). */
export type Answer = number | 'hang'

export interface Receiver {
  url: string
  received: Received[]
  /** Resolves once `n` requests have arrived in all (not only from now on). */
  count(n: number): Promise<Received[]>
  /** Answers the next requests so, in order; after them, 204. */
  answer(...answers: Answer[]): void
}

export async function startReceiver(t: Pick<Test, 'teardown'>): Promise<Receiver> {
  const received: Received[] = []
  const answers: Answer[] = []
  const waiters: { n: number; resolve: (all: Received[]) => void }[] = []
  const hanging = new Set<ServerResponse>()
  const server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (body += chunk))
    request.on('end', () => {
      received.push({ headers: request.headers, body, id: String(request.headers['webhook-id']) })
      const answer = answers.shift() ?? 204
      if (answer === 'hang') hanging.add(response)
      else response.writeHead(answer).end()
      for (const waiter of waiters.filter((w) => received.length >= w.n)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(received)
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    count: (n) => (received.length >= n ? Promise.resolve(received) : new Promise((resolve) => waiters.push({ n, resolve }))),
    answer: (...more) => void answers.push(...more),
  }
}

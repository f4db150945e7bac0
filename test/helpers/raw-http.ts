/** HTTP/1.1 over a bare socket, for methods, request lines, headers and bytes that fetch() refuses to send. */
import { connect } from 'node:net'

export interface RawAnswer {
  status: number
  /** Lower-cased names; a repeated header's values joined with ", ". */
  headers: Record<string, string>
  body: Buffer
}

/** What came back: an answer, or nothing before the server closed the connection or the time ran out. */
export type RawOutcome = { kind: 'answer'; answer: RawAnswer } | { kind: 'closed' | 'timeout'; received: Buffer }

const HEAD_END = Buffer.from('\r\n\r\n')

function parseHead(head: string): Omit<RawAnswer, 'body'> | undefined {
  const [statusLine = '', ...lines] = head.split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  if (!status) return undefined
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value
  }
  return { status: Number(status[1]), headers }
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at)
    const size = lineEnd === -1 ? 0 : parseInt(data.subarray(at, lineEnd).toString('latin1'), 16)
    if (!(size > 0)) return Buffer.concat(parts)
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** The final answer in `data` (interim 1xx answers skipped), or undefined when there is none. */
export function parseAnswer(data: Buffer, head: boolean): RawAnswer | undefined {
  let at = 0
  for (;;) {
    const end = data.indexOf(HEAD_END, at)
    if (end === -1) return undefined
    const parsed = parseHead(data.subarray(at, end).toString('latin1'))
    if (!parsed) return undefined
    const rest = data.subarray(end + HEAD_END.length)
    if (parsed.status >= 100 && parsed.status < 200) {
      at = end + HEAD_END.length
      continue
    }
    if (head) return { ...parsed, body: Buffer.alloc(0) }
    if (/chunked/i.test(parsed.headers['transfer-encoding'] ?? '')) return { ...parsed, body: dechunk(rest) }
    const length = parsed.headers['content-length']
    return { ...parsed, body: length === undefined ? rest : rest.subarray(0, Number(length)) }
  }
}

/**
 * Sends `request` as it is on a new connection and reads until the server closes it (requests
 * should say `Connection: close`). The request is written, not ended: a half-closed connection
 * would be a request of its own kind. Errors while writing (the server answered early and
 * closed) still return what was read.
 */
export function sendRaw(origin: string, request: Buffer, options: { head?: boolean; timeoutMs?: number } = {}): Promise<RawOutcome> {
  const { hostname, port } = new URL(origin)
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    const socket = connect(Number(port), hostname, () => socket.write(request))
    const finish = (kind: 'closed' | 'timeout') => {
      clearTimeout(timer)
      socket.destroy()
      const received = Buffer.concat(chunks)
      const answer = parseAnswer(received, options.head ?? false)
      resolve(answer ? { kind: 'answer', answer } : { kind, received })
    }
    const timer = setTimeout(() => finish('timeout'), options.timeoutMs ?? 10_000)
    socket.on('data', (chunk: Buffer) => chunks.push(chunk))
    socket.on('close', () => finish('closed'))
    socket.on('error', () => finish('closed'))
  })
}

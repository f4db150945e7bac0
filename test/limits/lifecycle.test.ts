// The service as a process: not ready while it migrates; on SIGTERM, not ready, no new
// connections, every request in flight answered (none reset), then exit 0 (LIM-10; DESIGN
// "Limits and faults"). PostgreSQL: the test holds locks to keep requests in flight.
import { connect, type Socket } from 'node:net'
import pg from 'pg'
import t, { type Test } from 'tap'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { adminCookie, listening, startServer, started } from '../helpers/service-process.js'

const postgres = databaseKinds().includes('postgres')
/** The advisory lock the migration runner (and `prisma migrate deploy`) takes. */
const MIGRATION_LOCK = 72707369

async function database(t: Test): Promise<string> {
  const created = await createTestDatabase('postgres')
  t.teardown(() => created.drop())
  return (created.config as { url: string }).url
}

async function client(t: Test, url: string): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url })
  await connection.connect()
  t.teardown(() => connection.end())
  return connection
}

/** A raw HTTP exchange on its own connection: what came back, and whether the connection was reset. */
interface Exchange {
  socket: Socket
  /** Resolves once a whole response (its headers and Content-Length bytes) has come. */
  answered: Promise<string>
  /** Resolves when the server closes the connection. */
  closed: Promise<{ response: string; reset: boolean }>
}

function open(origin: string): Promise<Exchange> {
  const { port } = new URL(origin)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1')
    let response = ''
    let reset = false
    let whole: (response: string) => void = () => {}
    const answered = new Promise<string>((done) => (whole = done))
    socket.on('data', (chunk) => {
      response += chunk
      const end = response.indexOf('\r\n\r\n')
      const length = /\r\ncontent-length: (\d+)/i.exec(response)?.[1]
      if (end !== -1 && length !== undefined && Buffer.byteLength(response.slice(end + 4)) >= Number(length)) whole(response)
    })
    socket.on('error', () => (reset = true))
    const closed = new Promise<{ response: string; reset: boolean }>((done) => socket.on('close', () => done({ response, reset })))
    socket.once('connect', () => resolve({ socket, answered, closed }))
    socket.once('error', reject)
  })
}

/** Resolves once `count` statements of the service wait on a lock. */
async function waitingOnLocks(watcher: pg.Client, count: number): Promise<void> {
  for (;;) {
    const { rows } = await watcher.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
    if (rows[0].n >= count) return
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

t.test('starting: listening but not ready, the API answering 503, until migrations are done', { skip: !postgres && 'needs PostgreSQL' }, async (t) => {
  const url = await database(t)
  // Another instance migrating: this one waits for the lock.
  const other = await client(t, url)
  await other.query(`SELECT pg_advisory_lock(${MIGRATION_LOCK})`)
  const server = startServer({ DATABASE_URL: url })
  const ready = server.waitFor(/^ready$/)
  const origin = await listening(t, server)
  const readyz = await fetch(`${origin}/readyz`)
  t.equal(readyz.status, 503)
  t.equal(readyz.headers.get('content-type'), 'application/health+json; charset=utf-8')
  t.same(await readyz.json(), { status: 'fail', output: 'starting: applying migrations' })
  t.equal((await fetch(`${origin}/livez`)).status, 200, 'live all along')
  const api = await fetch(`${origin}/api/v1/products`)
  t.equal(api.status, 503)
  t.equal(((await api.json()) as any).error.code, 'SERVICE_UNAVAILABLE')
  await other.query(`SELECT pg_advisory_unlock(${MIGRATION_LOCK})`)
  await ready
  t.equal((await fetch(`${origin}/readyz`)).status, 200, 'ready once migrated')
  t.equal((await fetch(`${origin}/api/v1/products`)).status, 200)
})

t.test('SIGTERM with requests in flight: every one answered, none reset, new connections refused, exit 0', { skip: !postgres && 'needs PostgreSQL' }, async (t) => {
  const url = await database(t)
  const server = await started(t, { DATABASE_URL: url, LOG_LEVEL: 'debug', STATEMENT_TIMEOUT_MS: '60000' })
  const cookie = await adminCookie(server.origin)
  const created = await fetch(`${server.origin}/api/v1/products`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: JSON.stringify(productBody()) })
  const product = (await created.json()) as { id: string }

  // Idle kept-alive connections: each has had an answer and stays open.
  const idle = await Promise.all(Array.from({ length: 5 }, () => open(server.origin)))
  for (const { socket } of idle) socket.write(`GET /api/v1/products HTTP/1.1\r\nHost: x\r\n\r\n`)
  for (const { answered } of idle) t.match(await answered, /^HTTP\/1\.1 200 OK/, 'an idle connection had its answer')
  // Writes whose bodies are half sent.
  const body = JSON.stringify(productBody())
  const uploads = await Promise.all(Array.from({ length: 5 }, () => open(server.origin)))
  const received = Array.from({ length: 5 }, () => server.waitFor(/^incoming request/))
  for (const [i, { socket }] of uploads.entries()) {
    const own = body.replace(/SKU-\d+/, `SKU-SIGTERM-${i}`)
    socket.write(`POST /api/v1/products HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nCookie: ${cookie}\r\nContent-Length: ${Buffer.byteLength(own)}\r\n\r\n${own.slice(0, 10)}`)
  }
  // Reads waiting on a lock in the database.
  const locker = await client(t, url)
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE products IN ACCESS EXCLUSIVE MODE')
  await Promise.all(received)
  const reads = await Promise.all(Array.from({ length: 5 }, () => open(server.origin)))
  for (const { socket } of reads) socket.write(`GET /api/v1/products/${product.id} HTTP/1.1\r\nHost: x\r\n\r\n`)
  await waitingOnLocks(await client(t, url), 5)

  const stopping = server.waitFor(/^shutting down/)
  server.child.kill('SIGTERM')
  await stopping
  for (const { closed } of idle) t.notOk((await closed).reset, 'an idle connection is closed, not reset')
  // The listener is closed: a new connection is refused (once the close has run).
  let refused = false
  while (!refused) refused = await open(server.origin).then(({ socket }) => (socket.destroy(), false), () => true)
  t.ok(refused, 'no new connections')

  for (const [i, { socket }] of uploads.entries()) socket.write(body.replace(/SKU-\d+/, `SKU-SIGTERM-${i}`).slice(10))
  await locker.query('COMMIT')
  for (const { closed } of [...uploads, ...reads]) {
    const { response, reset } = await closed
    t.match(response, /^HTTP\/1\.1 20[01] /, 'answered')
    t.match(response, /\r\nconnection: close\r\n/i, 'with Connection: close')
    t.notOk(reset, 'not reset')
  }
  t.equal((await server.exited).code, 0, 'exit 0')
})

t.test('SIGTERM: a request still running when SHUTDOWN_GRACE_MS ends is cut off, and the process still exits 0', { skip: !postgres && 'needs PostgreSQL' }, async (t) => {
  const url = await database(t)
  const server = await started(t, { DATABASE_URL: url, SHUTDOWN_GRACE_MS: '100', LOG_LEVEL: 'debug' })
  const locker = await client(t, url)
  await locker.query('BEGIN')
  await locker.query('LOCK TABLE products IN ACCESS EXCLUSIVE MODE')
  const read = await open(server.origin)
  read.socket.write('GET /api/v1/products HTTP/1.1\r\nHost: x\r\n\r\n')
  await waitingOnLocks(await client(t, url), 1)
  const over = server.waitFor(/^shutdown grace period over/)
  server.child.kill('SIGTERM')
  await over
  const { response } = await read.closed
  t.equal(response, '', 'its connection was closed without an answer')
  await locker.query('COMMIT')
  t.equal((await server.exited).code, 0)
})

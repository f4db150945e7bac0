// The service as a process: npm start's entry point, its data directory, signals and crashes.
import { connect } from 'node:net'
import path from 'node:path'
import t from 'tap'
import { createTestDatabase, databaseKinds } from '../helpers/databases.js'
import { productBody } from '../helpers/fixtures.js'
import { ADMIN, adminCookie, adminToken, runCli, sendJson, started, startServer, tempDir } from '../helpers/service-process.js'

const MIGRATE_CLI = path.resolve('src/cli/migrate.ts')
const USERS_CREATE_CLI = path.resolve('src/cli/users-create.ts')

const post = async (origin: string, body: unknown) =>
  fetch(`${origin}/api/v1/products`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: await adminCookie(origin) },
    body: JSON.stringify(body),
  })

// Every test here starts the service as processes of its own (each loads the code, opens PGlite
// and migrates): 90 s alone on a 2-core machine, more beside other files.
t.setTimeout(300_000)

t.test('a bad configuration stops the start with one line naming the variable', async (t) => {
  const { code, stderr } = await startServer({ PORT: 'abc' }).exited
  t.equal(code, 1)
  t.equal(stderr, 'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")\n')
})

t.test('the embedded database lives in DATA_DIR: created, migrated, kept across restarts and crashes', async (t) => {
  const dataDir = path.join(tempDir(t), 'data')
  const first = await started(t, { DATA_DIR: dataDir })
  const created = await post(first.origin, productBody())
  t.equal(created.status, 201)
  const id = ((await created.json()) as { id: string }).id
  first.child.kill('SIGTERM')
  t.equal((await first.exited).code, 0, 'SIGTERM: exit 0')

  const second = await started(t, { DATA_DIR: dataDir })
  t.equal((await fetch(`${second.origin}/api/v1/products/${id}`)).status, 200, 'the product is still there')
  // A crash right after a 201 loses nothing.
  const crashed = await post(second.origin, productBody())
  const crashedId = ((await crashed.json()) as { id: string }).id
  second.child.kill('SIGKILL')
  await second.exited

  const third = await started(t, { DATA_DIR: dataDir })
  t.equal((await fetch(`${third.origin}/api/v1/products/${crashedId}`)).status, 200, 'the product written just before the crash is there')
  third.child.kill('SIGINT')
  t.equal((await third.exited).code, 0, 'SIGINT: exit 0')
})

t.test('no password, session, token or hash reaches the log, even at trace level', async (t) => {
  const server = await started(t, { DATA_DIR: 'memory://', LOG_LEVEL: 'trace' })
  const password = 'a customer password'
  const json = { 'content-type': 'application/json' }
  const registered = await fetch(`${server.origin}/api/v1/users`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'c@shop.test', name: 'C', password }) })
  t.equal(registered.status, 201)
  await fetch(`${server.origin}/api/v1/sessions`, { method: 'POST', headers: json, body: JSON.stringify({ email: 'c@shop.test', password: 'a wrong password!' }) })
  const cookie = await adminCookie(server.origin)
  const issued = await fetch(`${server.origin}/api/v1/tokens`, { method: 'POST', headers: { ...json, cookie }, body: JSON.stringify({ name: 'log test' }) })
  const token = ((await issued.json()) as { token: string }).token
  t.equal((await fetch(`${server.origin}/api/v1/tokens`, { headers: { authorization: `Bearer ${token}` } })).status, 200)
  server.child.kill('SIGTERM')
  await server.exited
  const log = server.output.join('\n')
  t.match(log, /incoming request/, 'requests were logged')
  for (const secret of [password, 'a wrong password!', ADMIN.password, cookie.split('=')[1]!, token, 'scrypt$']) {
    t.notOk(log.includes(secret), `the log does not contain ${secret.slice(0, 12)}…`)
  }
})

t.test('SIGTERM: stop accepting, finish the request in flight, then exit 0', async (t) => {
  const server = await started(t, { DATA_DIR: path.join(tempDir(t), 'data'), LOG_LEVEL: 'debug' })
  const body = JSON.stringify(productBody())
  const port = Number(new URL(server.origin).port)
  const cookie = await adminCookie(server.origin)
  const socket = connect(port, '127.0.0.1')
  let response = ''
  socket.on('data', (chunk) => (response += chunk))
  const closed = new Promise((resolve) => socket.on('close', resolve))
  await new Promise((resolve) => socket.once('connect', resolve))
  // The headers and half the body: the request is in flight when the signal comes.
  socket.write(`POST /api/v1/products HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nCookie: ${cookie}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`)
  const received = server.waitFor(/^incoming request/)
  socket.write(body.slice(0, 10))
  await received
  const shuttingDown = server.waitFor(/^shutting down/)
  server.child.kill('SIGTERM')
  await shuttingDown
  socket.write(body.slice(10))
  await closed
  t.match(response, /^HTTP\/1\.1 201 Created/, 'the request in flight completes')
  t.match(response, /\r\nconnection: close\r\n/i, 'and closes its kept-alive connection')
  t.equal((await server.exited).code, 0)
})

t.test('with DATABASE_URL the same service runs on PostgreSQL', { skip: !databaseKinds().includes('postgres') && 'no PostgreSQL' }, async (t) => {
  const database = await createTestDatabase('postgres')
  t.teardown(() => database.drop())
  const url = (database.config as { url: string }).url
  const service = await started(t, { DATABASE_URL: url })
  const created = await post(service.origin, productBody())
  t.equal(created.status, 201)
  const id = ((await created.json()) as { id: string }).id
  t.equal((await fetch(`${service.origin}/api/v1/products/${id}`)).status, 200)
  // A batch's operations, made by the process itself, are its caller's and in its transaction
  // (found broken only outside the test runner: the first was unauthenticated, on the pool).
  const token = { authorization: `Bearer ${await adminToken(service.origin)}` }
  const batch = (operations: unknown[]) => sendJson('POST', `${service.origin}/api/v1/batch`, { operations }, token)
  const made = await batch([{ method: 'POST', path: '/products', body: productBody({ sku: 'BATCH-1' }) }])
  t.equal(made.status, 200)
  t.equal(((await made.json()) as { results: { status: number }[] }).results[0]!.status, 201, "the operation is the batch's caller's: an admin's")
  const undone = await batch([{ method: 'POST', path: '/products', body: productBody({ sku: 'BATCH-2' }) }, { method: 'POST', path: '/products', body: productBody({ price: -1 }) }])
  t.equal(undone.status, 422)
  t.same(await (await fetch(`${service.origin}/api/v1/products?sku=BATCH-2`)).json(), [], 'the failure undid the first operation: one transaction')
  service.child.kill('SIGTERM')
  t.equal((await service.exited).code, 0)
  const [{ n }] = (await database.open(database.config).then(async (db) => {
    try {
      return await db.query<{ n: number }>('SELECT count(*)::int AS n FROM products WHERE id = $1', [id])
    } finally {
      await db.close()
    }
  })) as [{ n: number }]
  t.equal(n, 1, 'written to PostgreSQL')
})

t.test('npm run migrate applies what is pending and then has nothing to do', async (t) => {
  const env = { DATA_DIR: path.join(tempDir(t), 'data') }
  const first = await runCli(MIGRATE_CLI, env)
  t.equal(first.code, 0, first.stderr)
  t.match(first.stdout, /^applied: \d{14}_init/)
  t.same(await runCli(MIGRATE_CLI, env), { code: 0, stdout: 'the database is up to date\n', stderr: '' })
})

t.test('the embedded database has one owner: a second process is refused and changes nothing', async (t) => {
  const dataDir = path.join(tempDir(t), 'data')
  const first = await started(t, { DATA_DIR: dataDir })
  const created = await post(first.origin, productBody())
  const id = ((await created.json()) as { id: string }).id
  const inUse = `the embedded database in ${dataDir} is in use by process ${first.child.pid} (started `
  const advice = '); stop it first, or set DATABASE_URL to share a PostgreSQL database between processes\n'
  const oneLine = (stderr: string, prefix: string) => stderr.startsWith(`${prefix}: ${inUse}`) && stderr.endsWith(advice) && stderr.split('\n').length === 2

  // Before the lock, this printed "created user" and exited 0, and the user was lost.
  const answers = ['late@shop.test', 'Late', 'a long enough password', 'a long enough password', 'n']
  const users = await runCli(USERS_CREATE_CLI, { DATA_DIR: dataDir }, answers)
  t.equal(users.code, 1, 'users:create: exit 1')
  t.ok(oneLine(users.stderr, 'Could not create the user'), `one line, and no prompt: ${users.stderr}`)
  t.equal(users.stdout, '')
  const migrated = await runCli(MIGRATE_CLI, { DATA_DIR: dataDir })
  t.equal(migrated.code, 1, 'migrate: exit 1')
  t.ok(oneLine(migrated.stderr, 'Migration failed'), migrated.stderr)
  const service = startServer({ DATA_DIR: dataDir })
  t.teardown(() => void service.child.kill('SIGKILL'))
  const second = await Promise.race([service.exited, service.waitFor(/^Server listening at/).then(() => ({ code: null, stderr: 'it listens' }))])
  t.equal(second.code, 1, 'a second service: exit 1')
  t.ok(oneLine(second.stderr, 'Failed to start'), second.stderr)

  const found = await fetch(`${first.origin}/api/v1/users?email=late@shop.test`, { headers: { cookie: await adminCookie(first.origin) } })
  t.equal(found.status, 200)
  t.equal(found.headers.get('x-total-count'), '0', 'the refused user does not exist')

  // kill -9 leaves the lock file behind; its process is gone, so the next start takes it over.
  first.child.kill('SIGKILL')
  await first.exited
  const afterCrash = await started(t, { DATA_DIR: dataDir })
  t.equal((await fetch(`${afterCrash.origin}/api/v1/products/${id}`)).status, 200, "the service's data is intact")
  afterCrash.child.kill('SIGTERM')
  t.equal((await afterCrash.exited).code, 0)
})

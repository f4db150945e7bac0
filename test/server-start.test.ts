// A start that cannot work fails before it listens, with one line naming the cause (and the fix
// where it is known). Before, a missing database logged "Server listening at ..." and then "Failed
// to start", and PgBouncer's refusal of statement_timeout read "The service is temporarily
// unavailable; try again later."
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import t, { type Test } from 'tap'
import { createTestDatabase, databaseKinds } from './helpers/databases.js'
import { missingInfrastructure, startPgBouncer } from './helpers/infrastructure.js'
import { listening, startServer, started, type Running } from './helpers/service-process.js'

const noPostgres = !databaseKinds().includes('postgres') && 'needs PostgreSQL'

/** The process's exit, once its output is read to the end. */
async function failed(t: Pick<Test, 'teardown'>, running: Running) {
  t.teardown(() => void running.child.kill('SIGKILL'))
  const closed = once(running.child, 'close')
  const { code, stderr } = await running.exited
  await closed
  return { code, stderr, listening: running.output.filter((line) => line.includes('listening')) }
}

/** `url` with another database name. */
function withDatabase(url: string, name: string): string {
  const other = new URL(url)
  other.pathname = `/${name}`
  return other.href
}

t.test('a database that does not exist: exit 1 and one line naming it, without listening first', { skip: noPostgres }, async (t) => {
  const database = await createTestDatabase('postgres')
  t.teardown(() => database.drop())
  const url = (database.config as { url: string }).url
  const name = `resourceful_missing_${randomBytes(6).toString('hex')}`
  const missing = await failed(t, startServer({ DATABASE_URL: withDatabase(url, name) }))
  t.equal(missing.code, 1)
  t.equal(missing.stderr, `Failed to start: database "${name}" does not exist\n`)
  t.same(missing.listening, [], 'no "Server listening" line')

  // With a database it can use, it listens and says it is starting until it is ready.
  const running = startServer({ DATABASE_URL: url })
  const [announced, ready] = [running.waitFor(/^Server listening at/), running.waitFor(/^ready$/)]
  await listening(t, running)
  t.match((await announced).msg, /^Server listening at http:\/\/127\.0\.0\.1:\d+ \(starting: the API answers 503 until ready\)$/)
  await ready
  running.child.kill('SIGTERM')
  t.equal((await running.exited).code, 0)
})

const noPgBouncer = noPostgres || missingInfrastructure(['pgbouncer'])

t.test('through PgBouncer in transaction mode without ?pgbouncer=true: the line names the refused parameter and the fix', { skip: noPgBouncer }, async (t) => {
  const database = await createTestDatabase('postgres')
  t.teardown(() => database.drop())
  const direct = (database.config as { url: string }).url
  // PgBouncer's default: a startup parameter it does not know is refused, not ignored.
  const pooled = await startPgBouncer(t, direct, { ignoreStartupParameters: [] })
  const refused = await failed(t, startServer({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct }))
  t.equal(refused.code, 1)
  t.match(refused.stderr, /^Failed to start: unsupported startup parameter: statement_timeout: DATABASE_URL leads to a connection pooler \(PgBouncer\)/)
  t.match(refused.stderr, /add \?pgbouncer=true to DATABASE_URL/, 'the fix')
  t.match(refused.stderr, /or list statement_timeout in ignore_startup_parameters in pgbouncer\.ini/, 'the other fix')
  t.equal(refused.stderr.split('\n').length, 2, 'one line')
  t.same(refused.listening, [], 'no "Server listening" line')

  const fixed = await started(t, { DATABASE_URL: `${pooled}?pgbouncer=true`, DATABASE_DIRECT_URL: direct })
  fixed.child.kill('SIGTERM')
  t.equal((await fixed.exited).code, 0, 'with ?pgbouncer=true it starts')
})

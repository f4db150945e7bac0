// One owner for an embedded data directory: who holds it, who is refused, and which locks are stale.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { createInterface } from 'node:readline'
import t from 'tap'
import { DataDirInUseError, LOCK_FILE, LOCK_STALE_MS, lockDataDir, type LockOwner } from '../../src/db/data-dir-lock.js'
import { openDatabase } from '../../src/db/client.js'
import { NODE_ARGS, sourceFile } from '../helpers/service-process.js'

const LOCK_MODULE = sourceFile('src/db/data-dir-lock.ts')

const lockOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')) as LockOwner

/** What this process writes in a lock, read from one it took and gave back. */
function thisProcess(dir: string): LockOwner {
  const lock = lockDataDir(dir)
  const owner = lockOf(dir)
  lock.release()
  return owner
}

/** A lock file as another process would have left it; `ageMs` back-dates its last touch. */
function plant(dir: string, owner: LockOwner, ageMs = 0): void {
  const file = path.join(dir, LOCK_FILE)
  // A new file, as another process's lock is; writing over the old one would keep its inode.
  writeFileSync(`${file}.new`, JSON.stringify(owner))
  const touched = new Date(Date.now() - ageMs)
  utimesSync(`${file}.new`, touched, touched)
  renameSync(`${file}.new`, file)
}

/** The pid of a process that has exited. */
const deadPid = () =>
  new Promise<number>((resolve) => {
    const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
    child.on('exit', () => resolve(child.pid!))
  })

t.test('the first process takes the lock; a second is refused with one line naming the owner', async (t) => {
  const dir = t.testdir()
  const lock = lockDataDir(dir)
  t.teardown(() => lock.release())
  const owner = lockOf(dir)
  t.match(owner, { pid: process.pid, startedAt: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/ })
  if (process.platform === 'linux') t.type(owner.startTicks, 'number', 'Linux: the start time that tells a reused pid apart')

  const refused = t.throws(() => lockDataDir(dir), DataDirInUseError) as unknown as DataDirInUseError
  t.equal(
    refused.message,
    `the embedded database in ${dir} is in use by process ${process.pid} (started ${owner.startedAt}); stop it first, or set DATABASE_URL to share a PostgreSQL database between processes`,
  )
  t.same(lockOf(dir), owner, 'the refused process changed nothing')
})

t.test('released, the lock file is gone and the next process takes it', async (t) => {
  const dir = t.testdir()
  lockDataDir(dir).release()
  t.notOk(existsSync(path.join(dir, LOCK_FILE)))
  const again = lockDataDir(dir)
  again.release()
  again.release()
  t.notOk(existsSync(path.join(dir, LOCK_FILE)), 'releasing twice is harmless')
})

t.test('a release leaves alone a lock that is no longer its own', async (t) => {
  const dir = t.testdir()
  const lock = lockDataDir(dir)
  const other = { ...lockOf(dir), hostname: 'another-host' }
  plant(dir, other)
  lock.release()
  t.same(lockOf(dir), other)
})

t.test('the lock of a process that died (kill -9) is taken over', async (t) => {
  const dir = t.testdir()
  plant(dir, { ...thisProcess(dir), pid: await deadPid() })
  const lock = lockDataDir(dir)
  t.teardown(() => lock.release())
  t.equal(lockOf(dir).pid, process.pid)
})

t.test('a live pid that started at another time is a reused pid: taken over', { skip: process.platform !== 'linux' && 'start times come from /proc' }, async (t) => {
  const dir = t.testdir()
  const me = thisProcess(dir)
  plant(dir, { ...me, startTicks: me.startTicks! - 1 })
  const lock = lockDataDir(dir)
  t.teardown(() => lock.release())
  t.same(lockOf(dir), me)
})

t.test('a lock from another host or container is judged by its last touch', async (t) => {
  const dir = t.testdir()
  const me = thisProcess(dir)
  for (const [what, other] of [
    ['another host', { ...me, hostname: 'another-host' }],
    ['another container with the same host name', { ...me, pidNamespace: 'pid:[1]' }],
  ] as const) {
    plant(dir, other, LOCK_STALE_MS - 5000)
    t.throws(() => lockDataDir(dir), { message: / is in use by process \d+( on another-host)? \(started / }, `${what}, touched recently: refused`)
    plant(dir, other, LOCK_STALE_MS + 5000)
    const lock = lockDataDir(dir)
    t.same(lockOf(dir), me, `${what}, untouched for longer: taken over`)
    lock.release()
  }
  plant(dir, { ...me, hostname: 'another-host' })
  t.throws(() => lockDataDir(dir), { message: `is in use by process ${me.pid} on another-host (started ${me.startedAt})` }, 'the message names the host')
})

t.test('an unreadable lock is judged by its age', async (t) => {
  const dir = t.testdir()
  writeFileSync(path.join(dir, LOCK_FILE), '')
  t.throws(() => lockDataDir(dir), { message: /is in use by another process;/ }, 'fresh: another process is writing it')
  const old = new Date(Date.now() - LOCK_STALE_MS - 5000)
  utimesSync(path.join(dir, LOCK_FILE), old, old)
  const lock = lockDataDir(dir)
  t.teardown(() => lock.release())
  t.equal(lockOf(dir).pid, process.pid)
})

t.test('a takeover cut short by a kill -9 leaves a claim that blocks nobody', async (t) => {
  const dir = t.testdir()
  const me = thisProcess(dir)
  plant(dir, { ...me, pid: await deadPid() })
  // Only the process that makes this claim, named after the stale lock, may remove that lock.
  const file = path.join(dir, LOCK_FILE)
  const { ino, mtimeMs } = statSync(file)
  const id = createHash('sha256').update(`${ino}:${mtimeMs}:${readFileSync(file, 'utf8')}`).digest('hex').slice(0, 16)
  const claim = `${file}.takeover-${id}-0`
  writeFileSync(claim, JSON.stringify(me))
  t.throws(() => lockDataDir(dir), { message: `in use by process ${process.pid} ` }, 'a live process taking it over right now')
  writeFileSync(claim, JSON.stringify({ ...me, pid: await deadPid() }))
  const lock = lockDataDir(dir)
  t.teardown(() => lock.release())
  t.equal(lockOf(dir).pid, process.pid, 'a dead one: the next claim is made')
  t.same(readdirSync(dir), [LOCK_FILE], 'and the claims are gone')
})

t.test('two processes taking over one stale lock at once: exactly one wins', async (t) => {
  const dir = t.testdir()
  plant(dir, { ...thisProcess(dir), pid: await deadPid() })
  // Each child loads the lock, says "ready", tries when told "go", says what happened, and holds
  // the lock until its standard input ends, so that a winner cannot release before the other tries.
  const script = `
    import { createInterface } from 'node:readline'
    const { lockDataDir } = await import(${JSON.stringify(LOCK_MODULE)})
    const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]()
    console.log('ready')
    await lines.next()
    let lock
    try { lock = lockDataDir(${JSON.stringify(dir)}); console.log('won') } catch (error) { console.log(error.name) }
    await lines.next()
    lock?.release()`
  const children = [0, 1].map(() => {
    const child = spawn(process.execPath, [...NODE_ARGS, '--input-type=module', '-e', script], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, _TAPJS_PROCESSINFO_COVERAGE_: '0' },
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    return { child, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() }
  })
  for (const { lines } of children) t.equal((await lines.next()).value, 'ready')
  for (const { child } of children) child.stdin!.write('go\n')
  const outcomes = await Promise.all(children.map(async ({ lines }) => (await lines.next()).value as string))
  t.same([...outcomes].sort(), ['DataDirInUseError', 'won'])
  const winner = children[outcomes.indexOf('won')]!.child.pid
  t.equal(lockOf(dir).pid, winner, 'the lock names the winner')
  await Promise.all(children.map(({ child }) => new Promise((resolve) => (child.on('exit', resolve), child.stdin!.end()))))
  t.notOk(existsSync(path.join(dir, LOCK_FILE)), 'and is gone once it stops')
})

t.test('the database holds the lock from open to close; memory:// needs none', async (t) => {
  const dir = t.testdir()
  const db = await openDatabase({ kind: 'pglite', dataDir: dir })
  t.equal(lockOf(dir).pid, process.pid)
  await t.rejects(openDatabase({ kind: 'pglite', dataDir: dir }), DataDirInUseError, 'a second open of the same directory')
  await db.close()
  t.notOk(existsSync(path.join(dir, LOCK_FILE)))
  const inMemory = await Promise.all([openDatabase({ kind: 'pglite', dataDir: 'memory://' }), openDatabase({ kind: 'pglite', dataDir: 'memory://' })])
  await Promise.all(inMemory.map((m) => m.close()))
})

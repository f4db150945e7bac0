/** One owner for an embedded database: a lock file in DATA_DIR naming the process that has it open. */
import { createHash } from 'node:crypto'
import { closeSync, fstatSync, futimesSync, openSync, readFileSync, readlinkSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { hostname } from 'node:os'
import path from 'node:path'

/** The lock's name inside DATA_DIR. */
export const LOCK_FILE = 'resourceful.lock'
/** How often the owner touches its lock, for processes that cannot check its pid (another host or container). */
export const LOCK_TOUCH_MS = 10_000
/** A lock whose owner cannot be checked is stale after this long untouched: three missed touches. */
export const LOCK_STALE_MS = 30_000

/** Who holds a lock, as its file records it. */
export interface LockOwner {
  pid: number
  hostname: string
  /** Linux's `/proc/self/ns/pid`: a pid names a process only inside its namespace (its container). */
  pidNamespace: string | null
  /** Linux's start time in clock ticks after boot (`/proc/<pid>/stat`, field 22): a reused pid has another. */
  startTicks: number | null
  /** When the process started, for the message. */
  startedAt: string
}

/** A second process opening a data directory that another one holds. */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner | undefined,
  ) {
    const host = owner && owner.hostname !== hostname() ? ` on ${owner.hostname}` : ''
    const who = owner ? `process ${owner.pid}${host} (started ${owner.startedAt})` : 'another process'
    // Lower case: it follows "Failed to start: ", "Migration failed: " or "Could not create the user: ".
    super(`the embedded database in ${dataDir} is in use by ${who}; stop it first, or set DATABASE_URL to share a PostgreSQL database between processes`)
    this.name = 'DataDirInUseError'
  }
}

export interface DataDirLock {
  /** Deletes the lock file if it is still this one. */
  release(): void
}

/** The lock file as one process saw it, held open so that its inode cannot be reused meanwhile. */
interface Seen {
  fd: number
  ino: number
  mtimeMs: number
  text: string
  owner: LockOwner | undefined
}

/** Field 22 of /proc/<pid>/stat; fields are counted after the command name, which may hold spaces. */
function startTicksOf(pid: number | 'self'): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
  } catch {
    return null
  }
}

function pidNamespace(): string | null {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    return null
  }
}

function thisProcess(): LockOwner {
  return {
    pid: process.pid,
    hostname: hostname(),
    pidNamespace: pidNamespace(),
    startTicks: startTicksOf('self'),
    startedAt: new Date(Math.round(performance.timeOrigin)).toISOString().replace(/\.\d+Z$/, 'Z'),
  }
}

function parseOwner(text: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(text) as LockOwner
    // pid 0 or a negative one would signal a process group in process.kill.
    return Number.isSafeInteger(owner.pid) && owner.pid > 0 && typeof owner.hostname === 'string' ? owner : undefined
  } catch {
    return undefined // being written this instant, or cut short by a crash: judged by its age
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM' // alive, someone else's
  }
}

function isHeld(seen: Seen, me: LockOwner): boolean {
  const { owner } = seen
  if (!owner || owner.hostname !== me.hostname || owner.pidNamespace !== me.pidNamespace) {
    // Its pid means nothing here: the owner proves it lives by touching the file.
    return Date.now() - seen.mtimeMs < LOCK_STALE_MS
  }
  return isAlive(owner.pid) && (owner.startTicks === null || startTicksOf(owner.pid) === owner.startTicks)
}

/** The file, or undefined if it is gone. */
function look(file: string): Seen | undefined {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const { ino, mtimeMs } = fstatSync(fd)
  const text = readFileSync(fd, 'utf8')
  return { fd, ino, mtimeMs, text, owner: parseOwner(text) }
}

const sameFile = (a: Seen | undefined, b: Seen) => a !== undefined && a.ino === b.ino && a.mtimeMs === b.mtimeMs

/**
 * Removes the stale lock `seen`, or throws if another process is taking it over. Deleting or
 * moving the file by name would race: a slower process, acting on what it saw earlier, would
 * remove the lock the faster one made meanwhile (4 processes racing, 2 rounds in 300 ended with two
 * owners). So only the process that creates this lock's claim, a file named after it, removes it;
 * with the claim held, nobody else can replace the lock, so checking it is still `seen` is enough
 * (no round in 300 with two owners, for 2, 4 and 8 processes racing).
 */
function takeOver(dataDir: string, file: string, seen: Seen, me: LockOwner): void {
  const id = createHash('sha256').update(`${seen.ino}:${seen.mtimeMs}:${seen.text}`).digest('hex').slice(0, 16)
  // A claim left by a process killed mid-takeover is stale as a lock would be; the next one is tried.
  for (let attempt = 0; ; attempt++) {
    const claim = `${file}.takeover-${id}-${attempt}`
    const fd = create(claim, me)
    if (fd === undefined) {
      const other = look(claim)
      if (!other) return // that takeover is done: look again
      closeSync(other.fd)
      if (isHeld(other, me)) throw new DataDirInUseError(dataDir, other.owner)
      continue
    }
    try {
      const now = look(file)
      if (now) closeSync(now.fd)
      // Gone or replaced already (this claim is a late one), or touched since: not ours to remove.
      if (sameFile(now, seen)) unlinkSync(file)
    } finally {
      closeSync(fd)
      // The abandoned claims before this one too: while one exists, nobody else can make it anew.
      for (let i = 0; i <= attempt; i++) rmSync(`${file}.takeover-${id}-${i}`, { force: true })
    }
    return
  }
}

/** Creates the lock file with this process in it, or returns undefined if one exists. */
function create(file: string, me: LockOwner): number | undefined {
  let fd: number
  try {
    fd = openSync(file, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined
    throw error
  }
  writeSync(fd, JSON.stringify(me))
  return fd
}

/** Locks released when the process exits without closing its database (process.exit after a failed start). */
const held = new Set<DataDirLock>()
let exitHook = false

function hold(file: string, fd: number): DataDirLock {
  const { ino } = fstatSync(fd)
  // futimes, not utimes: it touches this lock only, never one that replaced it.
  const touch = setInterval(() => {
    const now = new Date()
    try {
      futimesSync(fd, now, now)
    } catch {
      // a full or read-only disk: the database reports it; the lock goes stale for other hosts only
    }
  }, LOCK_TOUCH_MS).unref()
  const lock: DataDirLock = {
    release() {
      if (!held.delete(lock)) return
      clearInterval(touch)
      try {
        if (statSync(file).ino === ino) unlinkSync(file)
      } catch {
        // already gone
      }
      closeSync(fd)
    },
  }
  held.add(lock)
  if (!exitHook) {
    exitHook = true
    process.on('exit', () => held.forEach((l) => l.release()))
  }
  return lock
}

/**
 * Makes this process the only one using `dataDir`, or throws DataDirInUseError naming the process
 * that is. A lock made on this host, in this pid namespace, is held while its process lives (pid
 * and start time), so one left by a kill -9 is taken over at once; any other, while it is touched.
 */
export function lockDataDir(dataDir: string): DataDirLock {
  const file = path.join(dataDir, LOCK_FILE)
  const me = thisProcess()
  for (;;) {
    const fd = create(file, me)
    if (fd !== undefined) return hold(file, fd)
    const seen = look(file)
    if (!seen) continue
    try {
      if (isHeld(seen, me)) throw new DataDirInUseError(dataDir, seen.owner)
      takeOver(dataDir, file, seen, me)
    } finally {
      closeSync(seen.fd)
    }
  }
}

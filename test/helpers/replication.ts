/**
 * A PostgreSQL primary and a streaming replica of it made with pg_basebackup, both clusters of
 * the test's own on loopback ports (the machine's server allows no replication connections),
 * stopped and deleted when the test ends.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import type { Test } from 'tap'
import { freePort } from './infrastructure.js'
import { until } from './until.js'

/** The newest installed PostgreSQL's programs (Debian's layout), if any. */
function binaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const version = readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'pg_basebackup'))).sort((a, b) => Number(b) - Number(a))[0]
  return version && path.join(root, version, 'bin')
}

/** Why this machine cannot make the clusters, or undefined when it can. In CI it must. */
export function missingReplication(): string | undefined {
  const bin = binaries()
  const reason = !bin ? 'needs PostgreSQL server programs (initdb, pg_basebackup)' : process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0 ? 'runs as root and there is no postgres user to run PostgreSQL as' : undefined
  if (reason && process.env.CI === 'true') throw new Error(`CI needs a streaming replica: this machine ${reason}`)
  return reason
}

export interface Replication {
  /** The `postgres` database on the primary and on the replica. */
  primaryUrl: string
  replicaUrl: string
  /** Runs SQL on the replica (pausing or resuming its replay). */
  onReplica(sql: string): Promise<void>
  /** Stops the replica at once, as a crash would. */
  stopReplica(): void
}

export async function startReplication(t: Pick<Test, 'teardown'>): Promise<Replication> {
  const bin = binaries()!
  // PostgreSQL will not run as root: as root, its programs run as the postgres user.
  const asRoot = process.getuid?.() === 0
  const run = (program: string, args: string[]) => {
    const [command, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(bin, program), ...args]] : [path.join(bin, program), args]
    return execFileSync(command, argv, { stdio: 'pipe' }).toString()
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'resourceful-replication-'))
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString())
    chownSync(dir, uid, uid)
  }
  const [primaryPort, replicaPort] = [await freePort(), await freePort()]
  const primary = path.join(dir, 'primary')
  const replica = path.join(dir, 'replica')
  const stop = (data: string) => spawnSync(asRoot ? 'runuser' : path.join(bin, 'pg_ctl'), [...(asRoot ? ['-u', 'postgres', '--', path.join(bin, 'pg_ctl')] : []), '-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore' })
  t.teardown(() => {
    stop(replica)
    stop(primary)
    rmSync(dir, { recursive: true, force: true })
  })
  // initdb's pg_hba.conf trusts local and loopback connections, replication included.
  run('initdb', ['-D', primary, '-U', 'postgres', '--auth=trust', '--no-sync', '--locale=C', '-E', 'UTF8'])
  writeFileSync(path.join(primary, 'postgresql.auto.conf'), [`listen_addresses = '127.0.0.1'`, `unix_socket_directories = '${dir}'`, 'fsync = off', 'wal_level = replica', 'max_wal_senders = 4', ''].join('\n'))
  run('pg_ctl', ['-D', primary, '-o', `-p ${primaryPort}`, '-l', path.join(dir, 'primary.log'), '-w', 'start'])
  // -R writes the replica's primary_conninfo and standby.signal; -X stream copies the WAL meanwhile.
  run('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', replica, '-R', '-X', 'stream', '-c', 'fast'])
  run('pg_ctl', ['-D', replica, '-o', `-p ${replicaPort}`, '-l', path.join(dir, 'replica.log'), '-w', 'start'])
  const primaryUrl = `postgresql://postgres@127.0.0.1:${primaryPort}/postgres`
  const replicaUrl = `postgresql://postgres@127.0.0.1:${replicaPort}/postgres`
  const onReplica = async (sql: string) => {
    const client = new pg.Client({ connectionString: replicaUrl })
    await client.connect()
    try {
      await client.query(sql)
    } finally {
      await client.end()
    }
  }
  await until('the replica to stream from the primary', async () => {
    const client = new pg.Client({ connectionString: primaryUrl })
    await client.connect()
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM pg_stat_replication WHERE state = 'streaming'`)
    await client.end()
    return rows[0].n === 1 ? true : undefined
  })
  return { primaryUrl, replicaUrl, onReplica, stopReplica: () => void stop(replica) }
}

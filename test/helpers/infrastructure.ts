/**
 * Real infrastructure as processes of a test, on loopback ports: Debian's PgBouncer (transaction
 * pooling) and HAProxy (health-checking /readyz). Each is killed when the test ends.
 */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { Test } from 'tap'
import { until } from './until.js'

const PGBOUNCER = '/usr/sbin/pgbouncer'
const HAPROXY = '/usr/sbin/haproxy'

const BINARIES = { pgbouncer: PGBOUNCER, haproxy: HAPROXY }

/** Why these tests cannot run on this machine, or undefined when they can. In CI they must. */
export function missingInfrastructure(needs: (keyof typeof BINARIES)[] = ['pgbouncer', 'haproxy']): string | undefined {
  const missing = needs.filter((name) => !existsSync(BINARIES[name]))
  if (missing.length === 0) return undefined
  const binaries = missing.map((name) => BINARIES[name])
  if (process.env.CI === 'true') throw new Error(`CI needs ${binaries.join(' and ')} (.ci/run installs them)`)
  return `needs ${binaries.join(' and ')} (apt-get install ${missing.join(' ')})`
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

/** A folder of configuration files that a process running as another user can read. */
function configDir(t: Pick<Test, 'teardown'>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'resourceful-infra-'))
  chmodSync(dir, 0o755)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Starts `command` and resolves once something accepts connections on `port`. */
async function serve(t: Pick<Test, 'teardown'>, what: string, command: string, args: string[], port: number): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout!.on('data', (chunk) => (output += chunk))
  child.stderr!.on('data', (chunk) => (output += chunk))
  t.teardown(() => void child.kill('SIGKILL'))
  await until(`${what} to accept connections on ${port}`, async () => {
    if (child.exitCode !== null) throw new Error(`${what} exited: ${output}`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.end(), resolve(true)))
      socket.on('error', () => resolve(false))
    })
    return open || undefined
  })
}

/** The startup parameters PgBouncer drops instead of refusing the connection, as deployments often have it. */
const IGNORED_STARTUP_PARAMETERS = ['extra_float_digits', 'statement_timeout']

/**
 * PgBouncer in transaction mode in front of the PostgreSQL of `databaseUrl`, with the database
 * under the same name: returns the URL that goes through it. It trusts loopback as the server does.
 * `ignoreStartupParameters: []` is PgBouncer's own default: a client sending one is refused.
 */
export async function startPgBouncer(t: Pick<Test, 'teardown'>, databaseUrl: string, { ignoreStartupParameters = IGNORED_STARTUP_PARAMETERS } = {}): Promise<string> {
  const target = new URL(databaseUrl)
  const dir = configDir(t)
  const port = await freePort()
  writeFileSync(path.join(dir, 'users.txt'), `"${decodeURIComponent(target.username)}" ""\n`)
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      // Fewer server connections than the instances' pools hold between them: statements of one
      // client connection really do land on different server connections.
      'default_pool_size = 4',
      'max_client_conn = 500',
      // With statement_timeout ignored, what breaks without ?pgbouncer=true is prepared statements.
      ...(ignoreStartupParameters.length > 0 ? [`ignore_startup_parameters = ${ignoreStartupParameters.join(', ')}`] : []),
      '',
    ].join('\n'),
  )
  chmodSync(path.join(dir, 'pgbouncer.ini'), 0o644)
  // PgBouncer will not run as root; `-u` switches to an unprivileged user first.
  const user = process.getuid?.() === 0 ? ['-u', 'postgres'] : []
  await serve(t, 'PgBouncer', PGBOUNCER, [...user, path.join(dir, 'pgbouncer.ini')], port)
  const through = new URL(databaseUrl)
  through.hostname = '127.0.0.1'
  through.port = String(port)
  return through.href
}

export interface Balancer {
  origin: string
  /** The balancer's view of each server by name: UP, DOWN, ... (its stats page). */
  states(): Promise<Record<string, string>>
}

/**
 * HAProxy balancing round robin over `servers` (name to port), checking `GET /readyz` every
 * 100 ms, telling each server the client's address in X-Forwarded-For.
 */
export async function startHaproxy(t: Pick<Test, 'teardown'>, servers: Record<string, number>): Promise<Balancer> {
  const dir = configDir(t)
  const [port, statsPort] = [await freePort(), await freePort()]
  writeFileSync(
    path.join(dir, 'haproxy.cfg'),
    [
      'defaults',
      '  mode http',
      '  timeout connect 2s',
      '  timeout client 30s',
      '  timeout server 30s',
      // A connection an instance refuses (it died) is tried again on another.
      '  retries 2',
      '  option redispatch',
      'frontend api',
      `  bind 127.0.0.1:${port}`,
      '  option forwardfor',
      '  default_backend instances',
      'backend instances',
      '  balance roundrobin',
      '  option httpchk GET /readyz',
      '  http-check expect status 200',
      '  default-server inter 100ms fall 2 rise 1',
      ...Object.entries(servers).map(([name, serverPort]) => `  server ${name} 127.0.0.1:${serverPort} check`),
      'listen stats',
      `  bind 127.0.0.1:${statsPort}`,
      '  stats enable',
      '  stats uri /stats',
      '',
    ].join('\n'),
  )
  await serve(t, 'HAProxy', HAPROXY, ['-db', '-f', path.join(dir, 'haproxy.cfg')], port)
  return {
    origin: `http://127.0.0.1:${port}`,
    async states() {
      const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text()
      const [header, ...rows] = csv.trim().split('\n').map((line) => line.split(','))
      const [proxy, name, status] = ['# pxname', 'svname', 'status'].map((column) => header!.indexOf(column))
      return Object.fromEntries(rows.filter((row) => row[proxy!] === 'instances' && row[name!] !== 'BACKEND').map((row) => [row[name!]!, row[status!]!]))
    },
  }
}

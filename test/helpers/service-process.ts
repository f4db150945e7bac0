/** The service as a process of its own (npm start's entry point), with its log read line by line. */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import type { Test } from 'tap'
import type { DatabaseConfig } from '../../src/config.js'
import { createTestDatabase, type DatabaseKind } from './databases.js'
import { TEST_PASSWORD_COST } from './passwords.js'

/** The bootstrap admin every started service has: product writes need an admin. */
export const ADMIN = { email: 'admin@shop.test', password: 'a long admin password' }

export interface Running {
  child: ChildProcess
  origin: string
  /** Resolves with the first log line from now on whose `msg` matches. */
  waitFor(msg: RegExp): Promise<Record<string, unknown>>
  exited: Promise<{ code: number | null; stderr: string }>
  /** Every line the service wrote to stdout so far. */
  output: string[]
}

/**
 * A clean environment: the child runs under tsx, and tap's variables (loaders, coverage) would
 * make it report coverage that does not map onto tap's own.
 */
export const childEnv = (env: Record<string, string>) => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  _TAPJS_PROCESSINFO_COVERAGE_: '0',
  PASSWORD_HASH_COST: String(TEST_PASSWORD_COST),
  PORT: '0',
  LOG_LEVEL: 'info',
  ADMIN_EMAIL: ADMIN.email,
  ADMIN_PASSWORD: ADMIN.password,
  ...env,
})

/**
 * Node's arguments for the service and the CLIs as processes: the embedded PostgreSQL's
 * WebAssembly compiled only by V8's baseline compiler, each function when first called. A process
 * here lives seconds: the optimizing tier's background compilation cost it more CPU (1.4 s a
 * start) than its faster code saved. Only speed differs, never behaviour.
 */
const WASM_ARGS = ['--liftoff-only', '--wasm-lazy-compilation']

/** The run's src/ as JavaScript (scripts/test.mjs compiles it once a run), if there is one. */
const COMPILED = process.env.TEST_COMPILED_SRC

/**
 * A module of src/ (`src/server.ts`) as a child process loads it: the run's compiled JavaScript,
 * else the TypeScript through tsx (NODE_ARGS say which).
 */
export function sourceFile(file: string): string {
  return COMPILED ? path.join(COMPILED, path.relative('src', file).replace(/\.ts$/, '.js')) : path.resolve(file)
}

export const NODE_ARGS = COMPILED ? WASM_ARGS : [...WASM_ARGS, '--import', 'tsx']

export function startServer(env: Record<string, string>): Running {
  const child = spawn(process.execPath, [...NODE_ARGS, sourceFile('src/server.ts')], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr!.on('data', (chunk) => (stderr += chunk))
  const waiters: { msg: RegExp; resolve: (line: Record<string, unknown>) => void }[] = []
  const output: string[] = []
  createInterface({ input: child.stdout! }).on('line', (text) => {
    output.push(text)
    let line: Record<string, unknown>
    try {
      line = JSON.parse(text)
    } catch {
      return
    }
    for (const waiter of [...waiters]) {
      if (!waiter.msg.test(String(line.msg))) continue
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  })
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })))
  const waitFor = (msg: RegExp) => new Promise<Record<string, unknown>>((resolve) => waiters.push({ msg, resolve }))
  return { child, origin: '', waitFor, exited, output }
}

/** Resolves with the origin once the service listens, before it is ready; killed when `t` ends. */
export async function listening(t: Pick<Test, 'teardown'>, running: Running): Promise<string> {
  t.teardown(() => void running.child.kill('SIGKILL'))
  const line = await Promise.race([running.waitFor(/^Server listening at/), running.exited.then((e) => ({ msg: `exited: ${e.stderr}` }))])
  const match = /http:\/\/127\.0\.0\.1:(\d+)/.exec(String(line.msg))
  if (!match) throw new Error(`the server did not start: ${String(line.msg)}`)
  running.origin = `http://127.0.0.1:${match[1]}`
  return running.origin
}

/** A started service: listening, migrated, ready. */
export async function started(t: Pick<Test, 'teardown'>, env: Record<string, string>): Promise<Running> {
  const running = startServer(env)
  // It listens first (so /readyz can say "starting"), then migrates, then says it is ready.
  const ready = running.waitFor(/^ready$/)
  await listening(t, running)
  const outcome = await Promise.race([ready, running.exited.then((e) => ({ msg: `exited: ${e.stderr}` }))])
  if (outcome.msg !== 'ready') throw new Error(`the server did not get ready: ${String(outcome.msg)}`)
  return running
}

/**
 * A fresh database of `kind` for a CLI's processes: the environment that points them at it (no
 * ADMIN_*: the CLI makes the users), and its config for the test to open it. PGlite gets a
 * folder, since one in memory would end with the CLI's process.
 */
export async function cliDatabase(t: Pick<Test, 'teardown' | 'testdir'>, kind: DatabaseKind): Promise<{ env: Record<string, string>; config: DatabaseConfig }> {
  const database = await createTestDatabase(kind)
  t.teardown(() => database.drop())
  if (database.config.kind === 'postgres') return { env: { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', DATABASE_URL: database.config.url }, config: database.config }
  const dataDir = t.testdir()
  return { env: { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', DATABASE_URL: '', DATA_DIR: dataDir }, config: { kind: 'pglite', dataDir } }
}

/** Runs a CLI (a file under src/cli, as `src/cli/seed.ts`) to its exit, with `answers` on standard input, one a line. */
export function runCli(cli: string, env: Record<string, string>, answers: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...NODE_ARGS, sourceFile(cli)], { env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(answers.map((a) => `${a}\n`).join(''))
  })
}

export function tempDir(t: Pick<Test, 'teardown'>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'resourceful-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** The admin's session cookie. */
export async function adminCookie(origin: string): Promise<string> {
  const signedIn = await fetch(`${origin}/api/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
  return signedIn.headers.get('set-cookie')!.split(';', 1)[0]!
}

/** A request with a JSON body. */
export const sendJson = (method: string, url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })

/** A bearer token of the bootstrap admin, issued through `origin` right after signing in there. */
export async function adminToken(origin: string): Promise<string> {
  const issued = await sendJson('POST', `${origin}/api/v1/tokens`, { name: 'admin', scopes: ['read', 'write'], expires_in_days: 1 }, { cookie: await adminCookie(origin) })
  if (issued.status !== 201) throw new Error(`no token: ${issued.status} ${await issued.text()}`)
  return ((await issued.json()) as { token: string }).token
}

#!/usr/bin/env node
// `npm test`: type-check, lint the code and the OpenAPI documents, find a PostgreSQL server, run
// every tap test on it and on PGlite, hold the coverage floor, and end with one "N passed, N
// failed" line.
//
// PostgreSQL, in order: TEST_DATABASE_URL; DATABASE_URL; a local server on 127.0.0.1:5432 (user
// postgres); a container started with testcontainers where Docker runs. With none of them the
// tests run on PGlite alone, with a warning; under CI=true that is a failure instead.
import { spawn } from 'node:child_process'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (pkg, file) => `${root}node_modules/${pkg}/${file}`
const LOCAL_POSTGRES = 'postgresql://postgres@127.0.0.1:5432/postgres'

function run(command, args, { env = process.env, onLine } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', onLine ? 'pipe' : 'inherit', 'inherit'] })
    if (onLine) {
      let pending = ''
      child.stdout.on('data', (chunk) => {
        process.stdout.write(chunk)
        pending += chunk
        const lines = pending.split('\n')
        pending = lines.pop()
        lines.forEach(onLine)
      })
    }
    child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

async function canConnect(url) {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

async function startContainer() {
  const socket = process.env.DOCKER_HOST || existsSync('/var/run/docker.sock')
  if (!socket) return undefined
  try {
    const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
    const container = await new PostgreSqlContainer('postgres:17-alpine').start()
    return { url: container.getConnectionUri(), stop: () => container.stop() }
  } catch (error) {
    console.warn(`testcontainers could not start PostgreSQL: ${error.message}`)
    return undefined
  }
}

async function findPostgres() {
  for (const url of [process.env.TEST_DATABASE_URL, process.env.DATABASE_URL]) {
    if (url) return { url, source: 'environment', stop: async () => {} }
  }
  if (await canConnect(LOCAL_POSTGRES)) return { url: LOCAL_POSTGRES, source: 'local server', stop: async () => {} }
  const container = await startContainer()
  return container && { ...container, source: 'testcontainers' }
}

function checkCoverage() {
  const floor = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')).config?.coverageFloor ?? {}
  const summaryFile = `${root}/.tap/report/coverage-summary.json`
  if (!existsSync(summaryFile)) return ['no coverage summary was written']
  const total = JSON.parse(readFileSync(summaryFile, 'utf8')).total
  const below = Object.entries(floor).filter(([metric, min]) => total[metric].pct < min)
  return below.map(([metric, min]) => `${metric} coverage ${total[metric].pct}% is below the floor of ${min}%`)
}

// eslint-disable-next-line no-control-regex -- ANSI colour codes are control characters
const stripColors = (line) => line.replace(/\x1b\[[0-9;]*m/g, '')

const args = process.argv.slice(2)
const focused = args.length > 0
let failed = 0

if (!focused) {
  console.log('> type-check')
  failed += (await run(process.execPath, [bin('typescript', 'bin/tsc'), '--noEmit', '-p', 'tsconfig.json'])) === 0 ? 0 : 1
  console.log('> lint')
  failed += (await run(process.execPath, [bin('eslint', 'bin/eslint.js'), '.'])) === 0 ? 0 : 1
  // The checked-in documents: test/openapi/generated.test.ts fails when they are not the code's.
  console.log('> lint the OpenAPI documents (Spectral: OpenAPI rules and OWASP API Security)')
  failed += (await run(process.execPath, [bin('@stoplight/spectral-cli', 'dist/index.js'), 'lint', '--fail-severity=warn', '--quiet', 'openapi/v*.json'])) === 0 ? 0 : 1
}

const wantsPostgres = (process.env.TEST_DATABASES ?? 'postgres').split(',').includes('postgres')
const postgres = wantsPostgres ? await findPostgres() : undefined
const env = { ...process.env }
if (postgres) {
  env.TEST_DATABASE_URL = postgres.url
  console.log(`> tests on PostgreSQL (${postgres.source}) and PGlite`)
} else if (!wantsPostgres) {
  console.log(`> tests on ${process.env.TEST_DATABASES} only (TEST_DATABASES)`)
} else if (process.env.CI === 'true') {
  console.error('No PostgreSQL: set TEST_DATABASE_URL, run one on 127.0.0.1:5432, or run Docker. CI never skips it.')
  process.exit(1)
} else {
  env.TEST_DATABASES = 'pglite'
  console.warn('> WARNING: no PostgreSQL found; running on PGlite only (set TEST_DATABASE_URL to include it)')
}

let summary
rmSync(`${root}/.tap/report`, { recursive: true, force: true })
const tapCode = await run(process.execPath, [bin('tap', 'dist/esm/run.mjs'), ...args], {
  env,
  onLine: (line) => {
    const match = /^# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?/.exec(stripColors(line))
    if (match) summary = { total: Number(match[1]), pass: Number(match[2]), fail: Number(match[3] ?? 0) }
  },
})
await postgres?.stop()
if (tapCode !== 0) failed += 1

if (!focused) {
  for (const problem of checkCoverage()) {
    console.error(`coverage: ${problem}`)
    failed += 1
  }
}

const passed = summary?.pass ?? 0
// A skipped test (Chromium missing outside CI) neither passed nor failed.
const failing = summary?.fail ?? 0
if (failed > 0 && failing === 0) console.error(`${failed} check(s) besides the tests failed (see above)`)
console.log(`${passed} passed, ${failing + (failing === 0 && failed > 0 ? failed : 0)} failed`)
process.exit(failed > 0 ? 1 : 0)

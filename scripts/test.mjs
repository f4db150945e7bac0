#!/usr/bin/env node
// `npm test`: type-check, lint the code and the OpenAPI documents, find a PostgreSQL server, run
// every tap test on it and on PGlite, hold the coverage floor, and end with one line: "N passed,
// N failed", the skipped if any, and the checks besides the tests that failed, by name.
//
// PostgreSQL, in order: TEST_DATABASE_URL; DATABASE_URL; a local server on 127.0.0.1:5432 (user
// postgres); a container started with testcontainers where Docker runs. With none of them the
// tests run on PGlite alone, with a warning; under CI=true that is a failure instead.
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const bin = (pkg, file) => `${root}node_modules/${pkg}/${file}`
const LOCAL_POSTGRES = 'postgresql://postgres@127.0.0.1:5432/postgres'

/** Runs a command; with `onLine`, its output goes through it line by line (false drops the line). */
function run(command, args, { env = process.env, onLine } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: ['ignore', onLine ? 'pipe' : 'inherit', 'inherit'] })
    let pending = ''
    const each = (line) => {
      if (onLine(line) !== false) process.stdout.write(`${line}\n`)
    }
    child.stdout?.on('data', (chunk) => {
      const lines = (pending + chunk).split('\n')
      pending = lines.pop()
      lines.forEach(each)
    })
    child.on('close', (code, signal) => {
      if (pending) each(pending)
      resolve(code ?? (signal ? 1 : 0))
    })
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

/**
 * The migrated (and seeded) databases a run's test files copy instead of migrating their own
 * (test/helpers/databases.ts): PostgreSQL databases and PGlite files named with the run's id,
 * dropped when the run ends.
 */
const TEMPLATE_PREFIX = 'resourceful_template_'

async function dropTemplates(url, run) {
  for (const file of readdirSync(tmpdir()).filter((name) => name.startsWith(`${TEMPLATE_PREFIX}${run}`))) {
    rmSync(path.join(tmpdir(), file), { recursive: true, force: true })
  }
  if (!url) return
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [`${TEMPLATE_PREFIX}${run}`])
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
  } finally {
    await client.end()
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

/** The coverage against its floor: a line to print, and what is below it. */
function checkCoverage() {
  const floor = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')).config?.coverageFloor ?? {}
  const summaryFile = `${root}/.tap/report/coverage-summary.json`
  if (!existsSync(summaryFile)) return { line: 'coverage: no summary was written', below: ['coverage (no summary)'] }
  const total = JSON.parse(readFileSync(summaryFile, 'utf8')).total
  const metrics = Object.entries(floor).map(([metric, min]) => ({ metric, min, pct: total[metric].pct }))
  return {
    line: `coverage: ${metrics.map(({ metric, min, pct }) => `${metric} ${pct}% (floor ${min}%)`).join(', ')}`,
    below: metrics.filter(({ min, pct }) => pct < min).map(({ metric, min, pct }) => `${metric} coverage ${pct}% < ${min}%`),
  }
}

/**
 * Folders of test/ by their measured time, heaviest first: tap runs its files in the order of
 * their names, and a long group that started last would leave the other workers idle.
 */
const HEAVIEST_FIRST = ['limits', 'cli', 'conventions', 'openapi', 'events', 'docs', 'webhooks', 'db', 'http', 'observability', 'auth']
/** A folder of more files is cut in parts, so that no group outlasts the others. */
const GROUP_FILES = 10
/** A group runs a folder's files one after another: tap's bound per file (120 s) is too short for it. */
const GROUP_TIMEOUT_S = 900

/** The files under `dir`, all the way down, whose names `wanted` takes. */
function filesUnder(dir, wanted) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return filesUnder(file, wanted)
    return wanted(entry.name) ? [file] : []
  })
}

const isTestFile = (name) => name.endsWith('.test.ts')

/**
 * The files to give tap for these test files: a module per folder of test/ that imports the
 * folder's files in turn, so that their tests are subtests of one process, not a process each.
 * Every process pays some 8 s of CPU before its first test ends: loading the code through the
 * TypeScript loader, starting PGlite, building and checking a first app. Over 83 files that was
 * more than half of the suite's CPU (docs/testing.md).
 */
function writeGroups(files) {
  const tests = path.join(root, 'test')
  // test/config.test.ts is in the group "test"; test/conventions/items.test.ts in "conventions".
  const folders = new Map()
  for (const file of files.sort()) {
    const segments = path.relative(tests, file).split(path.sep)
    const name = segments.length > 1 ? segments[0] : 'test'
    folders.set(name, [...(folders.get(name) ?? []), file])
  }
  const rank = (name) => (HEAVIEST_FIRST.includes(name) ? HEAVIEST_FIRST.indexOf(name) : HEAVIEST_FIRST.length)
  const groups = [...folders.keys()]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .flatMap((name) => {
      const inFolder = folders.get(name)
      const parts = Math.ceil(inFolder.length / GROUP_FILES)
      const size = Math.ceil(inFolder.length / parts)
      return Array.from({ length: parts }, (_, i) => ({ name: parts > 1 ? `${name}-${i + 1}` : name, files: inFolder.slice(i * size, (i + 1) * size) }))
    })
  const dir = path.join(root, '.tap', 'groups')
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  return groups.map(({ name, files }, i) => {
    const file = path.join(dir, `${String(i + 1).padStart(2, '0')}-${name}.mjs`)
    const imports = files.map((test) => `await import(${JSON.stringify(pathToFileURL(test).href)})`)
    // After the files' own t.setTimeout (a file's bound), the group's.
    writeFileSync(file, [`// ${name}: its test files in one process (scripts/test.mjs writes this).`, "import t from 'tap'", ...imports, `t.setTimeout(${GROUP_TIMEOUT_S * 1000})`, ''].join('\n'))
    return path.relative(root, file)
  })
}

/**
 * src/ compiled to JavaScript (esbuild, half a second) for the processes tests start: the service,
 * the CLIs. Under tsx each of them paid some 2 s of CPU to compile the code as it loaded it, and
 * the suite starts dozens (test/helpers/service-process.ts). tsx compiles with the same esbuild.
 */
async function compileSources(run) {
  const out = path.join(root, '.tap', 'compiled', run)
  const { build } = await import('esbuild')
  const sources = filesUnder(path.join(root, 'src'), (name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
  await build({ entryPoints: sources, outdir: path.join(out, 'src'), outbase: path.join(root, 'src'), format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' })
  // What the code finds beside itself (src/db/migrate.ts: ../../prisma/migrations).
  symlinkSync(path.join(root, 'prisma'), path.join(out, 'prisma'))
  return path.join(out, 'src')
}

// eslint-disable-next-line no-control-regex -- ANSI colour codes are control characters
const stripColors = (line) => line.replace(/\x1b\[[0-9;]*m/g, '')

const args = process.argv.slice(2)
const focused = args.length > 0
/** Checks besides the tests that failed, by name: the last line says which. */
const failedChecks = []
/** Runs a check with its output held back, then prints it under the check's name: checks run side by side. */
const check = (name, command, commandArgs) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [command, ...commandArgs], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    const output = []
    child.stdout.on('data', (chunk) => output.push(chunk))
    child.stderr.on('data', (chunk) => output.push(chunk))
    child.on('close', (code) => {
      process.stdout.write(`> ${name}\n${Buffer.concat(output)}`)
      if (code !== 0) failedChecks.push(name)
      resolve()
    })
  })

if (!focused) {
  // At the same time: on two cores the three take 9 s instead of 17 s one after another.
  await Promise.all([
    check('type-check', bin('typescript', 'bin/tsc'), ['--noEmit', '-p', 'tsconfig.json']),
    check('lint', bin('eslint', 'bin/eslint.js'), ['.']),
    // The checked-in documents: test/openapi/generated.test.ts fails when they are not the code's.
    check('OpenAPI lint (Spectral: OpenAPI rules and OWASP API Security)', bin('@stoplight/spectral-cli', 'dist/index.js'), [
      'lint', '--fail-severity=warn', '--quiet', 'openapi/v*.json',
    ]),
  ])
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

env.TEST_RUN_ID = randomBytes(6).toString('hex')
env.TEST_COMPILED_SRC = await compileSources(env.TEST_RUN_ID)

let summary
rmSync(`${root}/.tap/report`, { recursive: true, force: true })
// Test files named on the command line run alone, a process each; many of them (`npm run
// test:quick` after a change to a helper every test imports) run by folder, as the whole suite.
const named = args.filter(isTestFile)
const byFolder = (files) => [`--timeout=${GROUP_TIMEOUT_S}`, ...writeGroups(files)]
const tapArgs = !focused
  ? byFolder(filesUnder(path.join(root, 'test'), isTestFile))
  : named.length > GROUP_FILES
    ? [...args.filter((arg) => !named.includes(arg)), ...byFolder(named.map((file) => path.resolve(root, file)))]
    : args
const tapCode = await run(process.execPath, [bin('tap', 'dist/esm/run.mjs'), ...tapArgs], {
  env,
  onLine: (line) => {
    const plain = stripColors(line)
    const match = /^# \{ total: (\d+), pass: (\d+)(?:, fail: (\d+))?(?:, skip: (\d+))?(?:, todo: (\d+))?/.exec(plain)
    if (match) summary = { pass: Number(match[2]), fail: Number(match[3] ?? 0), skip: Number(match[4] ?? 0) + Number(match[5] ?? 0) }
    // tap calls any coverage under 100% an ERROR; the floor below is what is held.
    return !/^# ERROR: incomplete \w+ coverage/.test(plain)
  },
})
await dropTemplates(postgres?.url, env.TEST_RUN_ID)
rmSync(path.join(root, '.tap', 'compiled', env.TEST_RUN_ID), { recursive: true, force: true })
await postgres?.stop()
const failing = summary?.fail ?? 0
if (tapCode !== 0 && failing === 0) failedChecks.push(`tap (exit code ${tapCode})`)

if (!focused) {
  const coverage = checkCoverage()
  console.log(coverage.line)
  failedChecks.push(...coverage.below)
}

// Skipped tests (Chromium missing outside CI, Redis not running) neither passed nor failed.
const skipped = summary?.skip ? `, ${summary.skip} skipped` : ''
const checks = failedChecks.length > 0 ? `; failed besides the tests: ${failedChecks.join(', ')}` : ''
console.log(`${summary?.pass ?? 0} passed, ${failing} failed${skipped}${checks}`)
process.exit(failing > 0 || failedChecks.length > 0 ? 1 : 0)

/**
 * `npm run bench`: the service on a fresh PostgreSQL database with 100,000 seeded products,
 * measured against two floors in the same run; results to bench/results/latest.md.
 * `npm run bench -- --smoke` proves the harness in a few seconds (small data, short runs).
 * `npm run bench -- --rows=10000000 --probes` seeds that many products and measures only the
 * sequential single requests (how lists grow with the table): bench/results/probes-<rows>.md.
 * `npm run bench -- --rows=1000000 --only=Export` measures exports of a million products alone.
 */
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openDatabase } from '../src/db/client.js'
import { migrate } from '../src/db/migrate.js'
import { onServer, urlWithDatabase } from '../test/helpers/postgres-server.js'
import type { LoadResult } from './load.js'
import { freePort, peakRssMiB, pinned, PINNED, runLoad, SERVER_CORE, startFloor, startServer, type Started } from './processes.js'
import { toMarkdown, type BenchReport, type Probe, type ScenarioResult } from './report.js'
import { LIST_QUERY, scenarioHeaders, SCENARIOS, type Scenario } from './scenarios.js'
import { measureWritingMany } from './writing-many.js'
import { measureAggregates } from './aggregates.js'
import { measureExporting, type Exporting } from './exporting.js'
import { freshProducts, seed } from './seed.js'

const smoke = process.argv.includes('--smoke')
/** `--only=PATCH` runs the scenarios whose name contains PATCH, for quick comparisons while profiling. */
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length)
/** `--probes`: the single-request latencies only, no load runs and no start times. */
const probesOnly = process.argv.includes('--probes')
const rowsFlag = process.argv.find((a) => a.startsWith('--rows='))?.slice('--rows='.length)
const settings = smoke
  ? { products: 1_000, warmupSeconds: 1, seconds: 2, connections: 10, probes: 5 }
  : { products: 100_000, warmupSeconds: 3, seconds: 10, connections: 50, probes: 40 }
if (rowsFlag !== undefined) {
  if (!/^[1-9]\d{0,8}$/.test(rowsFlag)) throw new Error(`--rows must be a whole number from 1 to 999999999 (got "${rowsFlag}")`)
  settings.products = Number(rowsFlag)
}
const serverUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres'
const run = randomBytes(3).toString('hex').toUpperCase()
const log = (message: string) => process.stderr.write(`bench: ${message}\n`)

/** Sequential requests, for latencies that do not depend on load: median and p90. */
async function probe(origin: string, name: string, path: string, target?: number, headers: Record<string, string> = {}): Promise<Probe> {
  const times: number[] = []
  for (let i = 0; i < settings.probes; i++) {
    const began = performance.now()
    const response = await fetch(origin + path, { headers })
    await response.arrayBuffer()
    if (!response.ok) throw new Error(`${path}: ${response.status}`)
    times.push(performance.now() - began)
  }
  times.sort((a, b) => a - b)
  return { name, medianMs: times[Math.floor(times.length / 2)]!, p90Ms: times[Math.floor(times.length * 0.9)]!, target }
}

/**
 * The requests whose latency must not grow with the table (DESIGN "Scale"), one at a time: what a
 * catalogue's first screens ask, a search, a deep cursor; and a deep page, which does grow.
 */
async function probeLists(origin: string, databaseUrl: string, ids: readonly string[]): Promise<Probe[]> {
  const cursor = await deepCursor(databaseUrl)
  const list = '/api/v1/products?'
  const firstPage = await probe(origin, 'GET ?size=20 (first page, bounded count)', `${list}size=20`, 10)
  return [
    await probe(origin, 'GET one product', `/api/v1/products/${ids[0]}`, 2),
    firstPage,
    // Issue 25: the page with 5 reviews of each item embedded, in the same statement, at most
    // twice the plain page's time; a full-text search for a word in one name of the table.
    await probe(origin, 'GET ?size=20&include=reviews (5 of each, embedded)', `${list}size=20&include=reviews&include[reviews][size]=5`, Math.round(20 * firstPage.medianMs) / 10),
    await probe(origin, 'GET ?q=42424 (full-text search, one name has the word)', `${list}q=42424`, 10),
    await probe(origin, 'GET ?q=product&size=20 (full-text search, every row matches)', `${list}q=product&size=20`),
    await probe(origin, 'GET ?status=active&size=20 (filtered)', `${list}status=active&size=20`, 10),
    await probe(origin, 'GET ?sort=price&size=20 (sorted by an indexed key)', `${list}sort=price&size=20`, 10),
    await probe(origin, `GET ?${LIST_QUERY} (filtered and sorted)`, `${list}${LIST_QUERY}`, 10),
    await probe(origin, 'GET ?sort=price&size=20&cursor=<at 80%> (deep cursor)', `${list}sort=price&size=20&cursor=${cursor}`, 10),
    // 42424 is in about 300 of ten million names, 4242 in about 4,000; both patterns are the same
    // two trigrams (424, 242), so the index finds the same 7,400 candidates for both and each is
    // read to recheck it: a search costs its candidates more than its matches.
    await probe(origin, 'GET ?name[contains]=42424 (trigram search)', `${list}name[contains]=42424`, 10),
    await probe(origin, 'GET ?name[contains]=4242 (trigram search, 10 times the matches)', `${list}name[contains]=4242`, 10),
    // Every seeded name starts with "Product ": six of this pattern's trigrams are in every row.
    await probe(origin, 'GET ?name[contains]=Product 4242 (trigrams every row has)', `${list}name[contains]=Product%204242`),
    await probe(origin, 'GET ?size=20 with Prefer: count=exact (counts every row)', `${list}size=20`, undefined, { prefer: 'count=exact' }),
    await probe(origin, 'GET ?page=4000&size=20 (deep page: offset 80,000)', `${list}page=4000&size=20`),
  ]
}

/** A cursor at 80% of the products sorted by price, as a client paging that far would hold. */
async function deepCursor(databaseUrl: string): Promise<string> {
  const offset = Math.floor(settings.products * 0.8)
  const row = await onServer(databaseUrl, async (client) => (await client.query('SELECT price, id FROM products ORDER BY price, id OFFSET $1 LIMIT 1', [offset])).rows[0])
  return Buffer.from(JSON.stringify({ s: 'price:asc,id:asc', v: [String(row.price), row.id] })).toString('base64url')
}

/**
 * Under load the service is pinned to its core, away from the load generator. Start probes run
 * alone and unpinned, as a service starts on this machine: pinned to one core, V8's compiler and
 * collector threads share it with the start itself (1.4 s became 2.2 s).
 */
async function startService(env: NodeJS.ProcessEnv, pin = true): Promise<Started> {
  const port = await freePort()
  const [command, args] = pin ? pinned(SERVER_CORE, process.execPath, ['dist/server.js']) : [process.execPath, ['dist/server.js']]
  // One address and one token send every request: quotas too large to reach, so that the rate
  // limiter's counting is measured without its 429s.
  const limits = { RATE_LIMIT_ANONYMOUS: '999999999', RATE_LIMIT_AUTHENTICATED: '999999999' }
  return startServer(command, args, { LOG_LEVEL: 'warn', PORT: String(port), ...limits, ...env }, port, '/api/v1/products?size=1')
}

/** Each start measured `rounds` times (a new data directory each round); the median is reported. */
async function measureStarts(databaseUrl: string, rounds: number): Promise<{ name: string; ms: number }[]> {
  const kinds = [
    ['PostgreSQL (migrated database)', () => ({ DATABASE_URL: databaseUrl })],
    ['Embedded PGlite, first start (creates and migrates ./data)', (dataDir: string) => ({ DATABASE_URL: '', DATA_DIR: dataDir })],
    ['Embedded PGlite, later start', (dataDir: string) => ({ DATABASE_URL: '', DATA_DIR: dataDir })],
  ] as const
  const times: number[][] = kinds.map(() => [])
  for (let round = 0; round < rounds; round++) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'resourceful-bench-'))
    try {
      for (const [i, [, env]] of kinds.entries()) {
        const service = await startService(env(dataDir), false)
        times[i]!.push(service.startMs)
        await service.stop()
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
  return kinds.map(([name], i) => ({ name, ms: times[i]!.sort((a, b) => a - b)[Math.floor(rounds / 2)]! }))
}

async function main(): Promise<void> {
  log('building')
  if (spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' }).status !== 0) throw new Error('build failed')
  const name = `resourceful_bench_${run.toLowerCase()}`
  const databaseUrl = urlWithDatabase(serverUrl, name)
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  const floors: Started[] = []
  let service: Started | undefined
  try {
    const db = await openDatabase({ kind: 'postgres', url: databaseUrl })
    await migrate(db)
    await db.close()
    log(`seeding ${settings.products} products`)
    const ids = await onServer(databaseUrl, (client) => seed(client, settings.products))
    const idsFile = path.join(mkdtempSync(path.join(tmpdir(), 'resourceful-ids-')), 'ids.json')
    writeFileSync(idsFile, JSON.stringify(ids))

    const starts = only || probesOnly ? [] : await measureStarts(databaseUrl, smoke ? 1 : 3)
    service = await startService({ DATABASE_URL: databaseUrl })
    const databaseFloor = await startFloor(['bench/floor-database.ts', databaseUrl])
    floors.push(databaseFloor)
    let loads = 0
    // Each load run gets its own prefix, so values it creates (skus) never collide with another's.
    const load = (origin: string, scenario: string, ids = idsFile) =>
      runLoad<LoadResult>({ origin, scenario, idsFile: ids, run: `${run}${(loads += 1)}`, connections: settings.connections, warmupSeconds: settings.warmupSeconds, seconds: settings.seconds })
    /** The ids a scenario's load uses: the sample's, or rows made for it alone when it uses them up (`count` of them). */
    const idsOf = async (scenario: Scenario, label: string, count = (scenario.freshPerSecond ?? 0) * (settings.warmupSeconds + settings.seconds)) => {
      if (!scenario.freshPerSecond) return { file: idsFile, ids }
      const fresh = await onServer(databaseUrl, (client) => freshProducts(client, count, `${run}${label}`))
      const file = path.join(path.dirname(idsFile), `fresh-${label}.json`)
      writeFileSync(file, JSON.stringify(fresh))
      return { file, ids: fresh }
    }

    // Before the write scenarios add and change rows: the latencies of the settled products.
    log('single-request latencies')
    const probes = only ? [] : await probeLists(service.origin, databaseUrl, ids)
    const scenarios: ScenarioResult[] = []
    for (const scenario of SCENARIOS.filter((s) => !probesOnly && (!only || s.name.includes(only)))) {
      log(scenario.name)
      const sample = scenario.request(0, (await idsOf(scenario, `S${scenarios.length}`, 1)).ids, `${run}S`)
      const headers = await scenarioHeaders(scenario, service.origin, sample)
      const response = await fetch(service.origin + sample.path, { method: sample.method, body: sample.body, headers })
      const body = await response.text()
      if (response.status !== scenario.status) throw new Error(`${scenario.name}: the service answered ${response.status}: ${body}`)
      const forService = (await idsOf(scenario, `A${scenarios.length}`)).file
      const result = await load(service.origin, scenario.name, forService)
      const constantFloor = await startFloor(['bench/floor-constant.ts', String(scenario.status), body])
      const constant = await load(constantFloor.origin, scenario.name, forService)
      await constantFloor.stop()
      const database = await load(databaseFloor.origin, scenario.name, (await idsOf(scenario, `B${scenarios.length}`)).file)
      scenarios.push({ name: scenario.name, service: result, constant, database })
    }
    const manyWanted = !probesOnly && (!only || 'Writing many'.includes(only))
    if (manyWanted) log('writing many')
    const writingMany = manyWanted ? await measureWritingMany(service.origin, run, smoke ? 1 : 5) : undefined
    // Last: a million orders make the database larger for whatever would come after.
    const aggregatesWanted = !probesOnly && (!only || 'Aggregates'.includes(only))
    if (aggregatesWanted) log('aggregates')
    const origin = service.origin
    const aggregates = aggregatesWanted ? await onServer(databaseUrl, (client) => measureAggregates(origin, client, smoke ? 10_000 : 1_000_000, smoke ? 3 : 10)) : undefined
    const peak = peakRssMiB(service.child.pid!)
    // Exports on a service of their own: its memory is the export's, not the load runs' before.
    const exportWanted = !probesOnly && (!only || 'Export'.includes(only))
    const exporting: Exporting[] = []
    // The default page (EXPORT_PAGE_ROWS) and a larger one, each on a fresh service.
    for (const pageRows of exportWanted ? (smoke ? [500] : (process.env.BENCH_EXPORT_PAGES ?? '500,1000').split(',').map(Number)) : []) {
      log(`exporting ${settings.products} products, pages of ${pageRows}`)
      const exporter = await startService({ DATABASE_URL: databaseUrl, EXPORT_MAX_ROWS: String(Math.max(settings.products * 2, 1_000_000)), EXPORT_PAGE_ROWS: String(pageRows) })
      try {
        exporting.push({ ...(await measureExporting(exporter.origin, exporter.child.pid!, smoke ? 1 : 2)), pageRows })
      } finally {
        await exporter.stop()
      }
    }

    const report: BenchReport = {
      smoke, products: settings.products, connections: settings.connections, seconds: settings.seconds,
      pinned: PINNED, scenarios, probes, starts, peakRssMiB: peak, writingMany, aggregates, exporting,
    }
    const markdown = toMarkdown(report)
    process.stdout.write(`\n${markdown}`)
    mkdirSync('bench/results', { recursive: true })
    const file = smoke ? 'smoke.md' : probesOnly ? `probes-${settings.products}.md` : 'latest.md'
    if (!only) writeFileSync(path.join('bench/results', file), markdown)
  } finally {
    await service?.stop()
    for (const floor of floors) await floor.stop()
    await onServer(serverUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))
  }
}

await main()

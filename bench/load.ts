/**
 * The load generator, run as its own process (pinned to its own core by bench/run.ts):
 * a warm-up, then a measured run of one scenario against one target. Prints one JSON line.
 */
import { readFileSync } from 'node:fs'
import autocannon from 'autocannon'
import { scenarioHeaders, SCENARIOS } from './scenarios.js'

export interface LoadConfig {
  origin: string
  scenario: string
  idsFile: string
  run: string
  connections: number
  warmupSeconds: number
  seconds: number
}

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  requests: number
  errors: number
}

const config = JSON.parse(process.argv[2]!) as LoadConfig
const scenario = SCENARIOS.find((s) => s.name === config.scenario)!
const ids = JSON.parse(readFileSync(config.idsFile, 'utf8')) as string[]
let n = 0
const headers = await scenarioHeaders(scenario, config.origin, scenario.request(0, ids, config.run))

function attack(seconds: number, phase: string): Promise<autocannon.Result> {
  return autocannon({
    url: config.origin,
    connections: config.connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request) => {
          const next = scenario.request(n++, ids, `${config.run}${phase}`)
          return { ...request, method: next.method, path: next.path, body: next.body, headers }
        },
      },
    ],
  })
}

await attack(config.warmupSeconds, 'W')
const result = await attack(config.seconds, 'M')
const wrongStatus = result.statusCodeStats ? Object.entries(result.statusCodeStats).filter(([code]) => Number(code) !== scenario.status) : []
const out: LoadResult = {
  rps: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  requests: result.requests.total,
  errors: result.errors + result.timeouts + wrongStatus.reduce((sum, [, stat]) => sum + (stat as { count: number }).count, 0),
}
process.stdout.write(`${JSON.stringify(out)}\n`)

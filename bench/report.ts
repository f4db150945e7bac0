/** Formats a benchmark run as the Markdown in bench/results/latest.md. */
import { cpus } from 'node:os'
import type { LoadResult } from './load.js'
import type { WritingMany } from './writing-many.js'
import { aggregatesMarkdown, type AggregatesResult } from './aggregates.js'
import type { Exporting } from './exporting.js'

export interface ScenarioResult {
  name: string
  service: LoadResult
  constant: LoadResult
  database: LoadResult
}

export interface Probe {
  name: string
  medianMs: number
  p90Ms: number
  target?: number
}

export interface BenchReport {
  smoke: boolean
  products: number
  connections: number
  seconds: number
  pinned: boolean
  scenarios: ScenarioResult[]
  probes: Probe[]
  starts: { name: string; ms: number }[]
  peakRssMiB: number | undefined
  writingMany: WritingMany | undefined
  aggregates: AggregatesResult | undefined
  exporting?: Exporting[]
}

const n = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : 'n/a')

export function toMarkdown(report: BenchReport): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  const lines = [
    `# Benchmark results${report.smoke ? ' (smoke run: not a measurement)' : ''}`,
    '',
    `${new Date().toISOString().slice(0, 10)}; ${cpus().length} cores (${cpu}); Node ${process.version}; ` +
      `PostgreSQL on the same machine; ${n(report.products)} products; ${report.connections} connections; ` +
      `${report.seconds} s per run after a warm-up; service and floors ${report.pinned ? 'pinned to core 0, load generator to the last core' : 'not pinned (no taskset)'}.`,
    '',
    '| Scenario | Service req/s | p50 ms | p99 ms | DB floor req/s | DB floor p99 ms | Constant floor req/s | vs DB floor | vs constant floor | Errors |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...report.scenarios.map((s) =>
      `| ${s.name} | ${n(s.service.rps)} | ${n(s.service.p50, 1)} | ${n(s.service.p99, 1)} | ${n(s.database.rps)} | ${n(s.database.p99, 1)} | ${n(s.constant.rps)} | ` +
        `${ratio(s.service.rps, s.database.rps)} | ${ratio(s.service.rps, s.constant.rps)} | ${s.service.errors + s.database.errors + s.constant.errors} |`,
    ),
    '',
    '| Single request (sequential) | median ms | p90 ms | target |',
    '|---|---:|---:|---|',
    ...report.probes.map((p) => `| ${p.name} | ${n(p.medianMs, 1)} | ${n(p.p90Ms, 1)} | ${p.target ? `< ${p.target} ms` : ''} |`),
    '',
    ...(report.writingMany
      ? [
          '| Writing many (same run) | service | one at a time | ratio | goal |',
          '|---|---:|---:|---:|---|',
          `| Products a second: arrays of 1,000 / 1,000 single POSTs (10 at a time) | ${n(report.writingMany.arrayPerSecond)} | ${n(report.writingMany.singlesPerSecond)} | ${ratio(report.writingMany.arrayPerSecond, report.writingMany.singlesPerSecond)} | at least 10 |`,
          `| A batch of 10 creates / one POST, median ms | ${n(report.writingMany.batchMs, 1)} | ${n(report.writingMany.postMs, 1)} | ${ratio(report.writingMany.batchMs, report.writingMany.postMs)} | under 3 |`,
          '',
        ]
      : []),
    ...(report.aggregates ? aggregatesMarkdown(report.aggregates) : []),
    ...(report.exporting ?? []).flatMap((exporting) => [
      `| Export of every product, pages of ${n(exporting.pageRows ?? 500)} (a service of its own; idle RSS ${exporting.idleMiB === undefined ? 'n/a' : n(exporting.idleMiB)} MiB) | rows | seconds | rows a second | MiB sent | peak RSS over idle, MiB | goal |`,
      '|---|---:|---:|---:|---:|---:|---|',
      ...exporting.runs.map((run) =>
        `| ${run.format} | ${n(run.rows)} | ${n(run.seconds, 1)} | ${n(run.rowsPerSecond)} | ${n(run.mebibytes)} | ${run.peakOverIdleMiB === undefined ? 'n/a' : n(run.peakOverIdleMiB, 1)} | at least 50,000 a second, within 50 MB |`),
      '',
    ]),
    '| Start to first answered request (median of 3, unpinned) | ms |',
    '|---|---:|',
    ...report.starts.map((s) => `| ${s.name} | ${n(s.ms)} |`),
    '',
    `Peak RSS of the service during the load runs: ${report.peakRssMiB ?? 'n/a'} MiB.`,
    '',
    'Ratios are requests per second of the service divided by the floor\'s in the same run: the database',
    'floor is node:http + pg running the same SQL by hand; the constant floor answers a constant body of',
    'the same size. See docs/performance.md.',
    '',
  ]
  return lines.join('\n')
}

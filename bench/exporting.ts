/**
 * Export (DESIGN "Data over time"), on a service of its own: every seeded product as CSV and as
 * NDJSON over HTTP, one export at a time. Rows a second as the client reads them to the end, and
 * the service's memory: its resident set when idle (warmed by a few lists) and its peak during
 * each export (VmHWM, reset between them through /proc/<pid>/clear_refs). Goals: at least 50,000
 * rows a second, the peak within 50 MB of idle.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { BENCH_ADMIN_TOKEN } from './scenarios.js'

export interface ExportRun {
  format: string
  rows: number
  seconds: number
  rowsPerSecond: number
  mebibytes: number
  /** The service's peak resident set during the export, less its idle one, in MiB. */
  peakOverIdleMiB: number | undefined
}

export interface Exporting {
  /** EXPORT_PAGE_ROWS of the service measured. */
  pageRows?: number
  idleMiB: number | undefined
  runs: ExportRun[]
}

/** A line of /proc/<pid>/status, in MiB (Linux). */
function statusMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match ? Number(match[1]) / 1024 : undefined
  } catch {
    return undefined
  }
}

/** Resets the peak (VmHWM) to the present resident set; false when the kernel does not let us. */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** One export read to its end, counting its lines (its records: no seeded value holds a line break). */
async function exportOnce(origin: string, accept: string, pid: number, idle: number | undefined, format: string): Promise<ExportRun> {
  const reset = resetPeak(pid)
  const began = performance.now()
  const response = await fetch(`${origin}/api/v2/products`, { headers: { accept, authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })
  if (response.status !== 200) throw new Error(`export as ${accept}: ${response.status} ${await response.text()}`)
  let lines = 0
  let bytes = 0
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++
  }
  const seconds = (performance.now() - began) / 1000
  const rows = accept === 'text/csv' ? lines - 1 : lines
  const peak = reset ? statusMiB(pid, 'VmHWM') : undefined
  return { format, rows, seconds, rowsPerSecond: rows / seconds, mebibytes: bytes / 1024 / 1024, peakOverIdleMiB: peak === undefined || idle === undefined ? undefined : peak - idle }
}

/** `runs` exports in each format from the service at `origin` (process `pid`), after a warm-up. */
export async function measureExporting(origin: string, pid: number, runs: number): Promise<Exporting> {
  for (let i = 0; i < 20; i++) await (await fetch(`${origin}/api/v2/products?size=100`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })).arrayBuffer()
  // A small export first: the code on the export's path is loaded and compiled before the idle reading.
  await (await fetch(`${origin}/api/v2/products?stock=1`, { headers: { accept: 'text/csv', authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } })).arrayBuffer()
  await new Promise((resolve) => setTimeout(resolve, 500))
  const idle = statusMiB(pid, 'VmRSS')
  const results: ExportRun[] = []
  for (let r = 0; r < runs; r++) {
    results.push(await exportOnce(origin, 'text/csv', pid, idle, 'CSV'))
    results.push(await exportOnce(origin, 'application/x-ndjson', pid, idle, 'NDJSON'))
  }
  return { idleMiB: idle, runs: results }
}

/** The service with its spans kept in memory: what a request did, statement by statement. */
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
import type { Test } from 'tap'
import type { TracingConfig } from '../../src/config.js'
import { startApi, type Api } from './api.js'
import type { DatabaseKind } from './databases.js'

/** Never reached: these tests give their spans to an exporter of their own, or run a collector. */
export const TRACING: TracingConfig = { endpoint: 'http://127.0.0.1:9', serviceName: 'resourceful-test' }

/** An in-memory exporter that can wait for a span: a request's span ends as its response is sent. */
export class Spans extends InMemorySpanExporter {
  #waiting: (() => void)[] = []

  override export(spans: ReadableSpan[], done: Parameters<InMemorySpanExporter['export']>[1]): void {
    super.export(spans, done)
    for (const wake of this.#waiting.splice(0)) wake()
  }

  async find(match: (span: ReadableSpan) => boolean): Promise<ReadableSpan> {
    for (;;) {
      const found = this.getFinishedSpans().find(match)
      if (found) return found
      await new Promise<void>((resolve) => this.#waiting.push(resolve))
    }
  }

  childrenOf(parent: ReadableSpan): ReadableSpan[] {
    return this.getFinishedSpans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId)
  }
}

export async function tracedApi(t: Test, kind: DatabaseKind): Promise<{ api: Api; spans: Spans; logs: Record<string, unknown>[] }> {
  const spans = new Spans()
  const logs: Record<string, unknown>[] = []
  const logger = { level: 'info', stream: { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) } }
  const api = await startApi(t, kind, undefined, { config: { tracing: TRACING }, spanExporter: spans, logger })
  return { api, spans, logs }
}

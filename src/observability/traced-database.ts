/**
 * Spans for the service's own statements, at its database seam (src/db/client.ts), so that
 * PostgreSQL and PGlite are traced alike: a span per statement, and one per transaction around
 * its statements. Only statements made under a live span (a request's) are traced: the
 * background rounds (webhook worker, event tail, housekeeping) would otherwise send a few
 * parentless spans a second.
 */
import { context, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { Database, Statements } from '../db/client.js'

/** The statement's first keyword (SELECT, INSERT, WITH): its span's name (OpenTelemetry's database conventions). */
const operationOf = (text: string): string => /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL'

/** SQLSTATE of a driver error, or of the one a translated error (an ApiError) was made from. */
function sqlStateOf(error: unknown): string | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code
    // Five characters with a digit (`23505`, `XX000`): never a catalogue code (`CONFLICT`).
    if (typeof code === 'string' && /^(?=.*\d)[0-9A-Z]{5}$/.test(code)) return code
  }
  return undefined
}

/**
 * A failed statement's span: its SQLSTATE and error type, never the message, which can quote the
 * values of the row (a unique violation's `Key (email)=(...)`).
 */
function recordFailure(span: Span, error: unknown): void {
  const state = sqlStateOf(error)
  span.setStatus({ code: SpanStatusCode.ERROR })
  span.setAttribute('error.type', state ?? (error instanceof Error ? error.name : 'Error'))
  if (state) span.setAttribute('db.response.status_code', state)
}

const live = (parent: Context): boolean => trace.getSpan(parent)?.isRecording() === true

/** Ends `span` when `work` settles, as it settles. */
function ending<T>(span: Span, work: Promise<T>): Promise<T> {
  return work.then(
    (result) => {
      span.end()
      return result
    },
    (error: unknown) => {
      recordFailure(span, error)
      span.end()
      throw error
    },
  )
}

/** `db`, with spans from `tracer`; the parameters are never recorded, only the statement's text. */
export function tracedDatabase(db: Database, tracer: Tracer): Database {
  function statement<T>(text: string, run: () => Promise<T>, parent: Context = context.active()): Promise<T> {
    if (!live(parent)) return run()
    const operation = operationOf(text)
    const attributes = { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': text }
    return ending(tracer.startSpan(operation, { kind: SpanKind.CLIENT, attributes }, parent), run())
  }
  const traced = (on: Statements): Statements => ({
    query: <Row>(text: string, params: unknown[], name?: string) => statement(text, () => on.query<Row>(text, params, name)),
  })
  return {
    ...db,
    ...traced(db),
    replica: traced(db.replica),
    readsAfter: (lsn) => traced(db.readsAfter(lsn)),
    transaction(fn, options) {
      const parent = context.active()
      if (!live(parent)) return db.transaction(fn, options)
      const span = tracer.startSpan('transaction', { kind: SpanKind.CLIENT, attributes: { 'db.system.name': 'postgresql' } }, parent)
      const inside = trace.setSpan(parent, span)
      // Inside the transaction's context: whatever `fn` traces is the transaction's child.
      const run = context.with(inside, () =>
        db.transaction(
          (tx) =>
            fn({
              query: <Row>(text: string, params: unknown[], name?: string) => statement(text, () => tx.query<Row>(text, params, name), inside),
              beforeCommit(text, params) {
                // Sent with the COMMIT, in its round trip: the transaction span's end is its end.
                span.addEvent('statement before commit', { 'db.operation.name': operationOf(text), 'db.query.text': text })
                tx.beforeCommit(text, params)
              },
            }),
          options,
        ),
      )
      return ending(span, run)
    },
  }
}

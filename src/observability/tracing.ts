/**
 * OpenTelemetry traces, when OTEL_EXPORTER_OTLP_ENDPOINT is set: a server span per request
 * (@fastify/otel) and a span per database statement (src/observability/traced-database.ts),
 * posted to the collector over OTLP/HTTP. app.ts imports this module only then: a service
 * without tracing loads no OpenTelemetry code.
 */
import { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Span } from '@opentelemetry/api'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import type { FastifyPluginCallback, FastifyRequest } from 'fastify'
import type { TracingConfig } from '../config.js'
import type { Database } from '../db/client.js'
import { tracedDatabase } from './traced-database.js'

/** The attribute of a request's span that holds its id: X-Request-Id, and `reqId` in the log. */
export const REQUEST_ID_ATTRIBUTE = 'resourceful.request_id'

export interface Tracing {
  /** @fastify/otel's plugin: registered before any other hook or route, so that it sees them all. */
  plugin: FastifyPluginCallback
  /** `db` with a span around each statement made while a request is traced. */
  traced(db: Database): Database
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>
}

/** OTLP/HTTP's traces path under the collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT is read (OTLP exporter specification). */
export const tracesUrl = (endpoint: string): string => `${endpoint.endsWith('/') ? endpoint : `${endpoint}/`}v1/traces`

/**
 * Names the request's span as OpenTelemetry's HTTP conventions do (`GET /api/v1/products/:id`,
 * the route template; the method alone when no route took it) and ties it to the request's id.
 */
function describeRequest(span: Span, request: FastifyRequest): void {
  const route = request.is404 ? undefined : request.routeOptions.url
  span.updateName(route ? `${request.method} ${route}` : request.method)
  span.setAttribute(REQUEST_ID_ATTRIBUTE, request.id)
}

/**
 * Starts a tracer provider exporting to the collector, or to `exporter` (tests). The first one
 * started in a process also becomes the global provider, with its context manager
 * (AsyncLocalStorage) and W3C Trace Context propagation: an incoming `traceparent` is continued.
 */
export function startTracing(config: TracingConfig, exporter?: SpanExporter): Tracing {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    // Batched: a request never waits for the collector. An exporter given directly gets each span as it ends.
    spanProcessors: [exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(config.endpoint) }))],
  })
  provider.register()
  // One span per request, its statements' its children: hooks and handlers get none (a dozen a
  // request, named after the plugin that added them).
  const instrumentation = new FastifyOtelInstrumentation({ registerOnInitialization: false, instrumentHooks: false, instrumentHandler: false, requestHook: describeRequest })
  instrumentation.setTracerProvider(provider)
  const tracer = provider.getTracer('resourceful')
  return {
    plugin: instrumentation.plugin(),
    traced: (db) => tracedDatabase(db, tracer),
    shutdown: () => provider.shutdown(),
  }
}

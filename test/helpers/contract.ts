/**
 * The OpenAPI document as a contract in tests: whether an answer is one the document describes
 * (its status documented for the operation, its media type one the status offers, its body valid
 * against that schema, the headers it documents as required present), and checkAnswers, which
 * holds every answer of a test's service to it (test/helpers/api.ts installs it).
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { requestedVersion } from '../../src/http/negotiation.js'

/** The parts of an OpenAPI 3.1 document the checks read. */
export interface OpenApiDocument {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, object>
    responses?: Record<string, DocumentedResponse>
    headers?: Record<string, DocumentedHeader>
    securitySchemes?: Record<string, object>
  }
  tags?: { name: string }[]
}

interface DocumentedHeader {
  required?: boolean
  schema?: object
}

export interface DocumentedResponse {
  description: string
  content?: Record<string, { schema: object }>
  headers?: Record<string, DocumentedHeader | { $ref: string }>
}

export interface Operation {
  operationId?: string
  deprecated?: boolean
  summary?: string
  tags?: string[]
  security?: Record<string, string[]>[]
  parameters?: { name: string; in: string; required?: boolean; schema?: object }[]
  requestBody?: { content: Record<string, { schema: object }> }
  responses: Record<string, DocumentedResponse | { $ref: string }>
}

/** One request and its answer, as a test client saw them. */
export interface Exchange {
  method: string
  /** The path the answer came from (after redirects), without the query. */
  path: string
  status: number
  headers: Headers
  /** The parsed body when it was JSON; the text otherwise. */
  body: unknown
  text: string
  /** The body is not checked: a stream (server-sent events, checked by its status and headers), or one reported already. */
  skipBody?: boolean
  /** The request asked for some fields (`fields=`): a representation has those, so the schemas' required fields may be absent. */
  partial?: boolean
  /** The request asked for no representation (`Prefer: return=minimal`): a create's 201 may have no body. */
  minimal?: boolean
}

/** The document with no required properties: what an answer to `fields=` is held to. */
function withoutRequired(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutRequired)
  if (typeof value !== 'object' || value === null) return value
  return Object.fromEntries(Object.entries(value).filter(([key]) => key !== 'required' || !Array.isArray((value as Record<string, unknown>)[key])).map(([key, inner]) => [key, withoutRequired(inner)]))
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

/** Every operation of the document, with its path and method. */
export function operations(document: OpenApiDocument): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method]! })),
  )
}

/** A path segment as the router reads it: percent-decoded, or as it is when it does not decode. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/**
 * The document's path template for a request path (`/api/v1/products/0190…`): fixed segments as
 * the router compares them (decoded), a `{param}` segment anything but empty (`/products/` is no item).
 */
function templateFor(document: OpenApiDocument, path: string): string | undefined {
  const segments = path.split('/')
  return Object.keys(document.paths).find((template) => {
    const parts = template.split('/')
    return parts.length === segments.length && parts.every((part, i) => (part.startsWith('{') ? segments[i] !== '' : part === decoded(segments[i]!)))
  })
}

/** The document's operation for a request path and method. */
export function operationFor(document: OpenApiDocument, method: string, path: string): Operation | undefined {
  const template = templateFor(document, path)
  return template === undefined ? undefined : document.paths[template]![method.toLowerCase()]
}

export type Contract = ReturnType<typeof contract>

/** Checks answers against one document; `problems` is empty for an answer the document describes. */
export function contract(document: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats.default(ajv)
  ajv.addSchema({ $id: 'doc', components: document.components })
  const validators = new Map<object, ReturnType<typeof ajv.compile>>()
  const validatorOf = (schema: object) => {
    let validate = validators.get(schema)
    if (!validate) {
      // `#/components/...` refs resolve in the document's own schema.
      validate = ajv.compile({ $id: `s${validators.size}`, ...JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"doc#/components/')) })
      validators.set(schema, validate)
    }
    return validate
  }
  /** A component a `#/components/<kind>/<name>` reference names, or the object itself. */
  const resolve = <T extends object>(object: T | { $ref: string }): T => {
    if (!('$ref' in object)) return object
    const [kind, name] = object.$ref.replace('#/components/', '').split('/') as [keyof OpenApiDocument['components'], string]
    return (document.components[kind] as Record<string, T>)[name]!
  }

  /** What is wrong with an answer of an operation the document has. */
  function answerProblems(operation: Operation, exchange: Exchange): string[] {
    const { method, path, status, headers, body, text } = exchange
    const at = `${method} ${path} → ${status}`
    const documented = operation.responses[String(status)]
    if (!documented) return [`${at}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`]
    const response = resolve<DocumentedResponse>(documented)
    const problems: string[] = []
    for (const [name, reference] of Object.entries(response.headers ?? {})) {
      const header = resolve<DocumentedHeader>(reference)
      const value = headers.get(name)
      if (value === null) {
        if (header.required) problems.push(`${at}: header ${name} is missing`)
      } else if (header.schema && !validatorOf(header.schema)(value)) {
        problems.push(`${at}: header ${name} ${JSON.stringify(value)} is not as its schema says (${JSON.stringify(header.schema)})`)
      }
    }
    const type = headers.get('content-type')?.split(';')[0]!.trim().toLowerCase()
    // HEAD answers as GET does, without the body.
    if (method === 'HEAD' || exchange.skipBody) return problems
    if (text === '') {
      // 204 and 304 have no content in the document: an empty body is theirs.
      // An export with no rows is an empty NDJSON file.
      if (response.content && !(exchange.minimal && status === 201) && type !== 'application/x-ndjson') problems.push(`${at}: an empty body, where the document has ${Object.keys(response.content).join(', ')}`)
      return problems
    }
    const media = type === undefined ? undefined : response.content?.[type]
    if (!media) {
      problems.push(`${at}: a ${type ?? 'untyped'} body, where the document has ${Object.keys(response.content ?? {}).join(', ') || 'none'}`)
    } else if (type === 'application/x-ndjson') {
      // An export: every line an item as the document's schema has it.
      const validate = validatorOf(media.schema)
      text.split('\n').slice(0, -1).forEach((line, i) => {
        if (!validate(JSON.parse(line))) problems.push(`${at}: line ${i + 1} ${ajv.errorsText(validate.errors, { dataVar: 'item' })}`)
      })
    } else if (/\bjson$/.test(type!)) {
      const validate = validatorOf(media.schema)
      if (!validate(body)) problems.push(`${at}: body ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`)
    }
    return problems
  }

  let relaxed: Contract | undefined
  return {
    document,
    /** What is wrong with an answer; none for one the document describes, or one it need not (see below). */
    problems(exchange: Exchange): string[] {
      if (exchange.partial && exchange.status < 300) return (relaxed ??= contract(withoutRequired(document) as OpenApiDocument)).problems({ ...exchange, partial: false })
      const method = exchange.method === 'HEAD' ? 'GET' : exchange.method
      const template = templateFor(document, exchange.path)
      const operation = template === undefined ? undefined : document.paths[template]![method.toLowerCase()]
      if (operation) return answerProblems(operation, exchange)
      // Not an operation: a preflight, a redirect to the canonical path, a refusal (a path or
      // method that does not exist, a body or target too large whatever the path). Anything else
      // is a route the document leaves out.
      if (exchange.method === 'OPTIONS' || (exchange.status >= 300 && exchange.status < 500)) return []
      return [`${exchange.method} ${exchange.path} → ${exchange.status}: not in the document`]
    },
  }
}

/**
 * The version an answer's path is in, and the path as that version names it: `/api/v2/...`, or
 * `/api/...` asked for with a version's vendor type in Accept (routed as `/api/v{n}/...`).
 */
export function versionOf(path: string, accept = ''): { version: number; path: string } | undefined {
  const versioned = /^\/api\/v(\d+)\//.exec(path)
  if (versioned) return { version: Number(versioned[1]), path }
  const version = path.startsWith('/api/') ? requestedVersion(accept) : undefined
  return version === undefined ? undefined : { version, path: `/api/v${version}${path.slice(4)}` }
}

/** What to do with what is wrong with a service's answers. */
export interface AnswerChecks {
  /** Called once per problem, as the answer is sent. */
  report(problem: string): void
  /** Requests not to check: routes a test added for itself, which no document has. */
  ignore?(method: string, path: string): boolean
}

/** An answer as it went out: status, header fields, the body's text. */
interface Sent {
  status: number
  headers: OutgoingHttpHeaders
  text: string
  streamed: boolean
}

/** Contracts by document text: services of a test file mostly serve the same documents; each is compiled once. */
const contracts = new Map<string, Contract>()

function contractOf(app: FastifyInstance, version: number): Contract | undefined {
  const text = app.openapi.get(version)?.()
  if (text === undefined) return undefined
  let checked = contracts.get(text)
  if (!checked) contracts.set(text, (checked = contract(JSON.parse(text) as OpenApiDocument)))
  return checked
}

function headersOf(outgoing: OutgoingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(outgoing)) {
    for (const item of value === undefined ? [] : [value].flat()) headers.append(name, String(item))
  }
  return headers
}

const lowerCased = (fields: object) => Object.fromEntries(Object.entries(fields).map(([name, value]) => [name.toLowerCase(), value as unknown]))

/**
 * Records a response as it is written: writeHead's status and fields (with those set before), the
 * chunks of the body, then `done` when it ends, or at writeHead for an event stream, which may never end.
 */
function record(response: ServerResponse, head: boolean, done: (sent: Sent) => void): void {
  const sent: Sent = { status: 200, headers: {}, text: '', streamed: false }
  const chunks: Buffer[] = []
  const keep = (chunk: unknown, encoding: unknown) => {
    if (head || sent.streamed || chunk === undefined || chunk === null || typeof chunk === 'function') return
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8') : Buffer.from(chunk as Uint8Array))
  }
  const { writeHead, write, end } = response
  response.writeHead = function (this: ServerResponse, status: number, ...rest: unknown[]) {
    const given = rest.find((arg) => typeof arg === 'object' && arg !== null && !Array.isArray(arg))
    Object.assign(sent, { status, headers: { ...this.getHeaders(), ...lowerCased(given ?? {}) } })
    sent.streamed = /^text\/event-stream/i.test(String(sent.headers['content-type'] ?? ''))
    if (sent.streamed) done(sent)
    return (writeHead as (...args: unknown[]) => ServerResponse).call(this, status, ...rest)
  } as ServerResponse['writeHead']
  response.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0])
    return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest)
  } as ServerResponse['write']
  let ended = false
  response.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    keep(chunk, rest[0])
    // Writes the head first when nothing has (Node calls writeHead itself then).
    const result = (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest)
    if (!ended && !sent.streamed) done({ ...sent, text: Buffer.concat(chunks).toString('utf8') })
    ended = true
    return result
  } as ServerResponse['end']
}

/** The parsed JSON of a JSON body; undefined otherwise, and for JSON that does not parse. */
function jsonOf(sent: Sent): { body?: unknown; problem?: string } {
  // JSON and this API's vendor types; not NDJSON, which is many JSON texts.
  if (sent.text === '' || !/\bjson\b/i.test(String(sent.headers['content-type'] ?? ''))) return {}
  try {
    return { body: JSON.parse(sent.text) }
  } catch {
    return { problem: 'a JSON content type on a body that is not JSON' }
  }
}

/**
 * Holds every answer `app` gives under `/api/` to its own OpenAPI document, whoever asked: a
 * client over HTTP (fetch, a raw socket, the test clients), or `app.inject`. Each problem goes to
 * `checks.report` as the answer is sent. Answers Node gives without a request (a request line it
 * cannot parse, CONNECT) and requests without Host (which name no resource, RFC 9112 §3.2) are
 * not checked.
 */
export function checkAnswers(app: FastifyInstance, checks: AnswerChecks): void {
  /** The exchange to check for a request, or undefined when it is none of the document's. */
  const exchangeOf = (method: string, target: string, accept: string | undefined, prefer: unknown) => {
    if (!target.startsWith('/')) return undefined
    const path = target.split('?', 1)[0]!
    const at = versionOf(path, accept)
    if (!at || at.path.endsWith('/openapi.json') || checks.ignore?.(method, path)) return undefined
    const contract = contractOf(app, at.version)
    return contract && { contract, method, path: at.path, partial: /[?&]fields=/.test(target), minimal: /return=minimal/i.test(String(prefer ?? '')) }
  }
  const check = ({ contract, method, path, partial, minimal }: NonNullable<ReturnType<typeof exchangeOf>>, sent: Sent) => {
    const { body, problem } = jsonOf(sent)
    if (problem) checks.report(`${method} ${path} → ${sent.status}: ${problem}`)
    const skipBody = sent.streamed || problem !== undefined
    for (const found of contract.problems({ method, path, status: sent.status, headers: headersOf(sent.headers), body, text: sent.text, skipBody, partial, minimal })) checks.report(found)
  }
  app.server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const exchange = request.headers.host === undefined ? undefined : exchangeOf(request.method ?? 'GET', request.url ?? '', request.headers.accept, request.headers.prefer)
    if (exchange) record(response, request.method === 'HEAD', (sent) => check(exchange, sent))
  })
  const inject = app.inject.bind(app)
  // Requests as options (a URL or its parts), answered by a promise: what the tests send.
  app.inject = ((options?: string | InjectOptions, callback?: unknown) => {
    if (options === undefined || callback !== undefined) return (inject as (...args: unknown[]) => unknown)(options, callback)
    const { method = 'GET', headers = {} } = typeof options === 'string' ? {} : options
    const asked = lowerCased(headers)
    const exchange = exchangeOf(method.toUpperCase(), typeof options === 'string' ? options : targetOf(options), asked.accept as string | undefined, asked.prefer)
    return inject(options).then((response) => {
      if (exchange) check(exchange, { status: response.statusCode, headers: response.headers, text: response.payload, streamed: false })
      return response
    })
  }) as FastifyInstance['inject']
}

/** An injected request's target: its URL, or the path of its parts. */
const targetOf = (options: InjectOptions) => {
  const target = options.url ?? options.path ?? '/'
  return typeof target === 'string' ? target : target.pathname
}

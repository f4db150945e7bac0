/**
 * The OpenAPI document as a contract in tests: whether an answer is one the document describes
 * (its status documented for the operation, its media type one the status offers, its body valid
 * against that schema, the headers it documents as required present). test/helpers/api.ts checks
 * every answer of the suite with it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

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
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

/** Every operation of the document, with its path and method. */
export function operations(document: OpenApiDocument): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method]! })),
  )
}

/** The document's path template for a request path (`/api/v1/products/0190…`), matching `{param}` segments. */
function templateFor(document: OpenApiDocument, path: string): string | undefined {
  const segments = path.split('/')
  return Object.keys(document.paths).find((template) => {
    const parts = template.split('/')
    return parts.length === segments.length && parts.every((part, i) => part.startsWith('{') || part === segments[i])
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
  function answerProblems(operation: Operation, { method, path, status, headers, body, text }: Exchange): string[] {
    const at = `${method} ${path} → ${status}`
    const documented = operation.responses[String(status)]
    if (!documented) return [`${at}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`]
    const response = resolve<DocumentedResponse>(documented)
    const problems: string[] = []
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      if (resolve<DocumentedHeader>(header).required && !headers.has(name)) problems.push(`${at}: header ${name} is missing`)
    }
    const type = headers.get('content-type')?.split(';')[0]!.trim().toLowerCase()
    // HEAD answers as GET does, without the body.
    if (text === '' || method === 'HEAD') return problems
    const media = type === undefined ? undefined : response.content?.[type]
    if (!media) {
      problems.push(`${at}: a ${type ?? 'untyped'} body, where the document has ${Object.keys(response.content ?? {}).join(', ') || 'none'}`)
    } else if (type!.endsWith('json')) {
      const validate = validatorOf(media.schema)
      if (!validate(body)) problems.push(`${at}: body ${ajv.errorsText(validate.errors, { dataVar: 'body' })}`)
    }
    return problems
  }

  return {
    document,
    /** What is wrong with an answer; none for one the document describes, or one it need not (see below). */
    problems(exchange: Exchange): string[] {
      const method = exchange.method === 'HEAD' ? 'GET' : exchange.method
      const template = templateFor(document, exchange.path)
      const operation = template === undefined ? undefined : document.paths[template]![method.toLowerCase()]
      if (operation) return answerProblems(operation, exchange)
      // Not an operation: a path or method that does not exist (404, 405), a preflight, a
      // redirect to the canonical path. Anything else is a route the document leaves out.
      if (exchange.method === 'OPTIONS' || [404, 405].includes(exchange.status) || (exchange.status >= 300 && exchange.status < 400)) return []
      return [`${exchange.method} ${exchange.path} → ${exchange.status}: not in the document`]
    },
  }
}

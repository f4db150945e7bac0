/**
 * The OpenAPI document as a contract in tests: whether an answer is one the document describes
 * (its status documented for the operation, its body valid against that status's schema, the
 * headers it documents as required present).
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

/** The parts of an OpenAPI 3.1 document the checks read. */
export interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, object>; securitySchemes?: Record<string, object> }
  tags?: { name: string }[]
}

export interface Operation {
  operationId?: string
  tags?: string[]
  security?: Record<string, string[]>[]
  parameters?: { name: string; in: string; required?: boolean; schema?: object }[]
  requestBody?: { content: Record<string, { schema: object }> }
  responses: Record<string, { description: string; content?: Record<string, { schema: object }>; headers?: Record<string, { required?: boolean }> }>
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const

/** Every operation of the document, with its path and method. */
export function operations(document: OpenApiDocument): { path: string; method: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method]! })),
  )
}

/** The document's operation for a request path (`/api/v1/products/0190…`) and method, matching `{param}` segments. */
export function operationFor(document: OpenApiDocument, method: string, path: string): Operation | undefined {
  const segments = path.split('/')
  for (const [template, item] of Object.entries(document.paths)) {
    const parts = template.split('/')
    if (parts.length === segments.length && parts.every((part, i) => part.startsWith('{') || part === segments[i])) return item[method.toLowerCase()]
  }
  return undefined
}

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
  return {
    problems(method: string, path: string, status: number, headers: Headers, body: unknown): string[] {
      const operation = operationFor(document, method, path)
      if (!operation) return [`${method} ${path} is not in the document`]
      const response = operation.responses[String(status)]
      if (!response) return [`${method} ${path}: status ${status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`]
      const problems: string[] = []
      for (const [name, header] of Object.entries(response.headers ?? {})) {
        if (header.required && !headers.has(name)) problems.push(`${method} ${path} ${status}: header ${name} is missing`)
      }
      const json = response.content?.['application/json']?.schema
      if (json && body !== undefined) {
        const validate = validatorOf(json)
        if (!validate(body)) problems.push(`${method} ${path} ${status}: body ${ajv.errorsText(validate.errors)}`)
      } else if (!json && body !== undefined && status !== 204 && status !== 304) {
        problems.push(`${method} ${path} ${status}: a body the document does not describe`)
      }
      return problems
    },
  }
}

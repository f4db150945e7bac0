/**
 * What every operation of a version has in common, added to the generated document in one pass
 * (@fastify/swagger's `transformObject`) rather than repeated on each route: the version's vendor
 * media type beside JSON, shared error answers, required headers, a deprecated version's notice
 * (Deprecation, Sunset, Link to the successor), schemas named once (components.ts), request
 * bodies' defaults in words (body-defaults.ts), the examples of the components every client
 * meets (examples.ts), and the values of `field[in]` lists (comma-lists.ts).
 */
import { STATUS_CODES } from 'node:http'
import type { ApiVersion } from '../http/versioning.js'
import { JSON_MEDIA_TYPE, vendorType } from '../http/negotiation.js'
import { describeBodyDefaults } from './body-defaults.js'
import { describeCommaLists } from './comma-lists.js'
import { nameComponents } from './components.js'
import { addExamples } from './examples.js'
import { BEFORE_ROUTING, HEADERS, REQUIRED_HEADER } from './responses.js'

interface Content {
  [mediaType: string]: { schema: object }
}
interface Header {
  schema: Record<string, unknown>
  description?: string
  required?: boolean
}
interface Response {
  description: string
  headers?: Record<string, Header | { $ref: string }>
  content?: Content
}
interface Operation {
  deprecated?: boolean
  requestBody?: { content: Content }
  responses: Record<string, Response | { $ref: string }>
}
interface Document {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Record<string, unknown>>; responses?: Record<string, Response>; headers?: Record<string, Header> }
}

/** `404` → `NotFound`: a shared error answer's name. */
const errorName = (status: string) => STATUS_CODES[status]!.replace(/[^A-Za-z]/g, '')

/** The version's vendor type beside JSON: the service takes and answers either (http/negotiation.ts). */
function withVendorType(content: Content | undefined, version: number): void {
  const json = content?.[JSON_MEDIA_TYPE]
  if (json) content[vendorType(version)] = json
}

/** Headers every answer may carry, shared as `#/components/headers/RateLimit`... (and a deprecated version's notice). */
const SHARED_HEADERS: ReadonlySet<string> = new Set(['RateLimit', 'RateLimit-Policy'])

/** `x-required` on a header's schema (responses.ts) as the header's `required`; shared headers as references. */
function finishHeaders(response: Response, shared: Record<string, Header>, notice: Record<string, Header>): void {
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    if ('$ref' in header) continue
    if (header.schema[REQUIRED_HEADER]) {
      delete header.schema[REQUIRED_HEADER]
      header.required = true
    }
    if (SHARED_HEADERS.has(name) || name in notice) {
      shared[name] ??= header
      response.headers![name] = { $ref: `#/components/headers/${name}` }
    }
  }
}

export function finishDocument<T>(generated: T, version: ApiVersion): T {
  const document = generated as Document
  nameComponents(document)
  describeBodyDefaults(document)
  describeCommaLists(document)
  addExamples(document.components.schemas)
  // Error answers by status, shared as `#/components/responses/NotFound`...
  const shared = new Map<number, Response>()
  const headers: Record<string, Header> = {}
  // Every answer of a deprecated version says so (versioning.ts), and links the same resource in
  // its successor: a list's paging links are in the same Link field.
  const notice: Record<string, Header> = {}
  if (version.deprecation) {
    notice.Deprecation = { schema: { type: 'string' }, description: HEADERS.Deprecation.description, required: true }
    if (version.sunset) notice.Sunset = { schema: { type: 'string' }, description: HEADERS.Sunset.description, required: true }
    notice.Link = { schema: { type: 'string' }, description: HEADERS.Link.description, required: true }
  }
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      if (version.deprecation) operation.deprecated = true
      withVendorType(operation.requestBody?.content, version.version)
      for (const [status, answer] of Object.entries(operation.responses)) {
        if ('$ref' in answer) continue
        if (!BEFORE_ROUTING.has(Number(status))) answer.headers = { ...answer.headers, ...notice }
        finishHeaders(answer, headers, notice)
        if (Number(status) >= 400) {
          // Errors are JSON whatever was asked for, and the same for every operation.
          answer.content = { [JSON_MEDIA_TYPE]: answer.content![JSON_MEDIA_TYPE]! }
          if (!shared.has(Number(status))) shared.set(Number(status), answer)
          operation.responses[status] = { $ref: `#/components/responses/${errorName(status)}` }
        } else {
          withVendorType(answer.content, version.version)
        }
      }
    }
  }
  document.components.headers = headers
  document.components.responses = Object.fromEntries([...shared].sort(([a], [b]) => a - b).map(([status, answer]) => [errorName(String(status)), answer]))
  return generated
}

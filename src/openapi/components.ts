/**
 * Schemas a document names once rather than repeats: request bodies given inline on their routes
 * (signing in, issuing a token), and sub-schemas several representations have (an amount of
 * money, a webhook's event types). The route schemas keep them inline, as each validates and
 * serializes on its own; the document's copies become `#/components/schemas/<Name>` references.
 */

type Schema = Record<string, unknown>

interface Document {
  paths: Record<string, Record<string, { operationId?: string; requestBody?: { content: Record<string, { schema: Schema }> } }>>
  components: { schemas?: Record<string, Schema> }
}

/**
 * Sub-schemas shared by name, each found where one of its copies is (a component's property).
 * Only an object or an array is shared: v1 shows amounts as plain numbers, which stay inline.
 */
export const SHARED_SCHEMAS: readonly { name: string; at: readonly [component: string, property: string] }[] = [
  { name: 'Money', at: ['Product', 'price'] },
  { name: 'OrderTotal', at: ['Order', 'total'] },
  { name: 'WebhookEvents', at: ['Webhook', 'events'] },
]

/** `createToken` → `TokenCreate`, as the collections' bodies are named (`ProductCreate`, `ProductPatch`); `signIn` → `SignIn`. */
const VERBS: Record<string, string> = { create: 'Create', replace: 'Replace', update: 'Patch' }
export function bodyName(operationId: string): string {
  const verb = /^(create|replace|update)([A-Z]\w*)$/.exec(operationId)
  return verb ? `${verb[2]}${VERBS[verb[1]!]}` : operationId.charAt(0).toUpperCase() + operationId.slice(1)
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/** JSON with keys sorted: equal for schemas that say the same, whatever order their keywords came in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const entries = Object.entries(value).filter(([, item]) => item !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonical(item)}`).join(',')}}`
}

/** Inline request bodies as components: one schema, referred to from each media type. */
function nameBodies(document: Document, schemas: Record<string, Schema>): void {
  for (const operation of Object.values(document.paths).flatMap((item) => Object.values(item))) {
    const content = Object.values(operation.requestBody?.content ?? {})
    // A choice between named schemas (one item or an array of them) stays a choice; text (an
    // import's CSV or NDJSON) stays as it is.
    const named = (media: { schema: Schema }) => !('$ref' in media.schema) && !('oneOf' in media.schema) && media.schema.type !== 'string'
    const inline = content.find(named)
    if (!inline || operation.operationId === undefined) continue
    const name = bodyName(operation.operationId)
    if (schemas[name] && canonical(schemas[name]) !== canonical(inline.schema)) throw new Error(`OpenAPI: the body of ${operation.operationId} would be ${name}, which is another schema`)
    schemas[name] = inline.schema
    for (const media of content) if (named(media)) media.schema = ref(name)
  }
}

/** Copies of shared schemas by their canonical JSON, and the `type` of each as JSON. */
interface Copies {
  byJson: Map<string, Schema>
  types: Set<string>
}

/**
 * Replaces every copy of the shared schemas below `node` with a reference: a nullable copy with
 * `anyOf` the reference and null. Only a node with a copy's `type` is written out to compare:
 * writing out every node would write each subtree again at every level above it (0.2 s a document).
 */
function replaceCopies(node: unknown, copies: Copies): void {
  if (node === null || typeof node !== 'object') return
  for (const [key, child] of Object.entries(node)) {
    if (child === null || typeof child !== 'object') continue
    const shared = copies.types.has(JSON.stringify((child as Schema).type)) ? copies.byJson.get(canonical(child)) : undefined
    if (shared) (node as Record<string, unknown>)[key] = shared
    else replaceCopies(child, copies)
  }
}

/** Names the document's inline bodies and shared sub-schemas (SHARED_SCHEMAS) as components. */
export function nameComponents(generated: unknown): void {
  const document = generated as Document
  const schemas = (document.components.schemas ??= {})
  nameBodies(document, schemas)
  const copies: Copies = { byJson: new Map(), types: new Set() }
  const found: [string, Schema][] = []
  for (const { name, at: [component, property] } of SHARED_SCHEMAS) {
    const schema = (schemas[component]?.properties as Record<string, Schema> | undefined)?.[property]
    if (!schema || (schema.type !== 'object' && schema.type !== 'array')) continue
    found.push([name, structuredClone(schema)])
    const nullable = { ...schema, type: [schema.type, 'null'] }
    copies.byJson.set(canonical(schema), ref(name))
    copies.byJson.set(canonical(nullable), { anyOf: [ref(name), { type: 'null' }] })
    copies.types.add(JSON.stringify(schema.type)).add(JSON.stringify(nullable.type))
  }
  if (found.length === 0) return
  replaceCopies(document.paths, copies)
  replaceCopies(schemas, copies)
  for (const [name, schema] of found) schemas[name] = schema
}

/**
 * Request bodies' defaults in words: in the schemas of request bodies, a property's `default`
 * becomes a sentence of its description. openapi-typescript, with its default options
 * (`defaultNonNullable`), types a property that has a `default` as always present. That holds
 * for an answer, which the service fills in, and not for a body, which it cannot tell from an
 * answer once the body is a component (`#/components/schemas/ProductCreate`): a typed client
 * made with the defaults refused a create without `stock`, `status` and `tags`. The route
 * schemas keep their defaults (resources/fields.ts reads the create's), and a schema that
 * answers lists the fields it always has in `required`.
 */

type Schema = Record<string, unknown>

interface Document {
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Schema }> } }>>
  components: { schemas: Record<string, Schema> }
}

/** `#/components/schemas/ProductCreate` → `ProductCreate`. */
const componentOf = (schema: Schema) => (typeof schema.$ref === 'string' ? schema.$ref.replace('#/components/schemas/', '') : undefined)

/** Moves each `default` of a property below `node` into the property's description; not through `$ref`s. */
function describeDefaults(node: unknown): void {
  if (node === null || typeof node !== 'object') return
  const properties = (node as Schema).properties as Record<string, Schema> | undefined
  for (const property of Object.values(properties ?? {})) {
    if (typeof property !== 'object' || !('default' in property)) continue
    const said = `Default: \`${JSON.stringify(property.default)}\`.`
    property.description = typeof property.description === 'string' ? `${property.description} ${said}` : said
    delete property.default
  }
  for (const child of Object.values(node)) describeDefaults(child)
}

/** Describes the defaults of every schema the document's operations take as a body. */
export function describeBodyDefaults(generated: unknown): void {
  const document = generated as Document
  const bodies = new Set<Schema>()
  for (const operation of Object.values(document.paths).flatMap((item) => Object.values(item))) {
    for (const { schema } of Object.values(operation.requestBody?.content ?? {})) {
      // One item or an array of them: each choice's, and an array's items'.
      for (const one of [schema, ...((schema.oneOf as Schema[] | undefined) ?? [])].flatMap((choice) => [choice, ...(choice.items ? [choice.items as Schema] : [])])) {
        const name = componentOf(one)
        bodies.add(name === undefined ? one : document.components.schemas[name]!)
      }
    }
  }
  for (const body of bodies) describeDefaults(body)
}

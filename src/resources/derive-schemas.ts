/** Derives the PUT and PATCH body schemas from a collection's create schema, once at startup. */
import type { TObject, TSchema } from 'typebox'

interface ObjectSchema {
  type: 'object'
  properties: Record<string, TSchema>
  required?: string[]
  additionalProperties?: boolean
}

const clone = (schema: TObject): ObjectSchema => {
  const { properties, required } = schema as unknown as ObjectSchema
  return { type: 'object', properties: { ...properties }, required: [...(required ?? [])], additionalProperties: false }
}

/**
 * The properties without their `default`s, which describe a create. A merge patch's absent field
 * is unchanged; a PUT's becomes the create's default (writes.ts) except a state field, which keeps
 * its state (write-handlers.ts), so a default on the Replace body would be wrong there. Nothing
 * reads these: the validator fills no defaults in (useDefaults: false), writes.ts takes the create's.
 */
function withoutDefaults(schema: ObjectSchema): ObjectSchema {
  const properties = Object.entries(schema.properties as Record<string, { default?: unknown }>).map(([name, { default: _, ...property }]) => [name, property])
  return { ...schema, properties: Object.fromEntries(properties) as Record<string, TSchema> }
}

/** The create schema, closed to unknown fields. */
export function createBodySchema(create: TObject): ObjectSchema {
  return clone(create)
}

/**
 * PUT carries the full representation, so the read-only fields a GET returned may come back,
 * typed as in the item schema; the handler checks the identifying ones against the stored item.
 * Write-only fields cannot come back from a GET: a PUT without one keeps the stored value.
 */
export function replaceBodySchema(create: TObject, item: TObject, readOnly: readonly string[], writeOnly: readonly string[] = []): ObjectSchema {
  const schema = clone(create)
  schema.required = schema.required!.filter((name) => !writeOnly.includes(name))
  const itemProperties = (item as unknown as ObjectSchema).properties
  for (const name of readOnly) schema.properties[name] = itemProperties[name]!
  return withoutDefaults(schema)
}

/** RFC 7396 merge patch: every field optional; `null` clears optional ones and is refused for required ones. */
export function patchBodySchema(create: TObject): ObjectSchema {
  const schema = clone(create)
  schema.required = []
  return withoutDefaults(schema)
}

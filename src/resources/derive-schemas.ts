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
  return schema
}

/** RFC 7396 merge patch: every field optional; `null` clears optional ones and is refused for required ones. */
export function patchBodySchema(create: TObject): ObjectSchema {
  const schema = clone(create)
  schema.required = []
  return schema
}

/**
 * API versions as views of one collection: a version may show some fields differently (another
 * shape, another schema) over the same stored rows. Everything else about the collection (fields,
 * filters, sorting, storage) is shared; only representations and bodies are converted.
 */
import type { TObject, TSchema } from 'typebox'
import type { Collection, VersionView } from './collection.js'
import { createBodySchema, patchBodySchema, replaceBodySchema } from './derive-schemas.js'
import type { Representation } from './represent.js'

/** A collection as one API version serves it. */
export interface CollectionVersion {
  readonly version: number
  readonly schemas: { readonly item: TObject; readonly summary: TObject }
  readonly bodies: Collection['bodies']
  /** A representation as this version shows it. */
  toView(representation: Representation): Representation
  /** A validated request body as the collection takes it. */
  fromView(body: Record<string, unknown>): Record<string, unknown>
}

/** `schema` with the view's fields swapped in; the same object when the view changes none of them. */
function substitute(schema: TObject, view: VersionView): TObject {
  const { properties } = schema as unknown as { properties: Record<string, TSchema> }
  const swapped = Object.keys(view).filter((name) => name in properties)
  if (swapped.length === 0) return schema
  return { ...schema, properties: { ...properties, ...Object.fromEntries(swapped.map((name) => [name, view[name]!.schema])) } } as TObject
}

/** Derived once per collection and version at startup. */
export function collectionVersion(collection: Collection, version: number): CollectionVersion {
  const view = collection.options.versions?.[version] ?? {}
  const fields = Object.entries(view)
  for (const [name] of fields) {
    if (!collection.field.has(name)) throw new TypeError(`collection ${collection.name}: version ${version} shows "${name}", which is not in the item schema`)
  }
  const { schemas } = collection.options
  if (fields.length === 0) return { version, schemas, bodies: collection.bodies, toView: (r) => r, fromView: (b) => b }
  const create = substitute(schemas.create, view)
  const convert = (source: Record<string, unknown>, direction: 'read' | 'write') => {
    const out = { ...source }
    // Absent stays absent and null stays null: a merge patch's "clear this field" passes through.
    for (const [name, field] of fields) if (out[name] !== undefined && out[name] !== null) out[name] = field[direction](out[name])
    return out
  }
  return {
    version,
    schemas: { item: substitute(schemas.item, view), summary: substitute(schemas.summary, view) },
    bodies: {
      create: createBodySchema(create),
      replace: replaceBodySchema(create, substitute(schemas.item, view), collection.readOnly, collection.writeOnly),
      patch: patchBodySchema(create),
    },
    toView: (representation) => convert(representation, 'read'),
    fromView: (body) => convert(body, 'write'),
  }
}

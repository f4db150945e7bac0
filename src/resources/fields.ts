/** Derives each collection's field table from its TypeBox schemas once, at startup. */
import type { TSchema } from 'typebox'

export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'datetime' | 'uuid' | 'enum' | 'string[]'

/** What the factory needs to know about one field of a collection. */
export interface Field {
  /** The JSON name, which is also the column's and the Prisma model field's: one name throughout. */
  readonly name: string
  readonly kind: FieldKind
  readonly nullable: boolean
  /** Allowed values of an enum field. */
  readonly values: readonly string[] | undefined
  /** Set by the server only: absent from the create schema. */
  readonly readOnly: boolean
  /** Computed from other columns when represented; not a column itself. */
  readonly computed: boolean
  /** The value a create or replace uses when the field is absent or null. */
  readonly default: unknown
  /** Bounds of a number or integer field (from the schema; an integer column's range otherwise). */
  readonly range: readonly [number, number] | undefined
}

/** The range of a PostgreSQL `integer`, the bound of an integer field whose schema sets none. */
const INT4: readonly [number, number] = [-2_147_483_648, 2_147_483_647]

interface JsonSchema {
  minimum?: number
  maximum?: number
  type?: string | string[]
  format?: string
  enum?: unknown[]
  items?: JsonSchema
  default?: unknown
  properties?: Record<string, JsonSchema>
}

function kindOf(name: string, schema: JsonSchema): FieldKind {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type
  if (schema.enum) return 'enum'
  if (type === 'string') return schema.format === 'date-time' ? 'datetime' : schema.format === 'uuid' ? 'uuid' : 'string'
  if (type === 'integer' || type === 'number' || type === 'boolean') return type
  if (type === 'array' && schema.items?.type === 'string') return 'string[]'
  throw new TypeError(`field ${name}: unsupported schema type ${JSON.stringify(schema.type)}`)
}

/** The field table of a collection: every property of the item schema, in its order. */
export function deriveFields(item: TSchema, create: TSchema, computedNames: readonly string[]): Field[] {
  const itemProps = (item as JsonSchema).properties ?? {}
  const createProps = (create as JsonSchema).properties ?? {}
  return Object.entries(itemProps).map(([name, schema]) => {
    const input = createProps[name]
    const types = Array.isArray(schema.type) ? schema.type : [schema.type]
    const kind = kindOf(name, schema)
    const numeric = kind === 'integer' || kind === 'number'
    const fallback = kind === 'integer' ? INT4 : [-Infinity, Infinity]
    return {
      name,
      kind,
      range: numeric ? ([schema.minimum ?? fallback[0]!, schema.maximum ?? fallback[1]!] as const) : undefined,
      nullable: types.includes('null'),
      values: schema.enum?.filter((v): v is string => typeof v === 'string'),
      readOnly: input === undefined,
      computed: computedNames.includes(name),
      default: input?.default ?? null,
    }
  })
}

/**
 * A group as an API version shows it, and its schema for the document: each key as the items
 * show that field, `count` as an integer, and each metric in the form the collection gives its
 * field (an amount as a number in v1, as `{amount, currency}` in v2); null for a metric over no
 * values (an empty set's sum, or a field null in every item).
 */
import { Type, type TObject, type TSchema } from 'typebox'
import type { Collection, FieldView } from '../collection.js'
import type { Field } from '../fields.js'
import { converterOf, type Convert, type Representation, type Row } from '../represent.js'
import type { AggregatePlan } from './parse.js'
import type { Metric } from './spec.js'

/** A collection's groups in one API version. */
export interface AggregateViews {
  /** The group's keys and metrics, as the plan asked for them, in its order. */
  represent(row: Row, plan: AggregatePlan): Representation
  /**
   * One group: every groupable key and every metric, each optional (an answer has those asked
   * for), in this order: the keys, then the metrics, each as the collection declares them.
   */
  readonly schema: TObject
}

/** The value's kind: a count an integer, an average a number, a sum of integers an integer; else the field's. */
function kindOf(metric: Metric): Field['kind'] {
  if (metric.fn === 'count') return 'integer'
  if (metric.fn === 'avg') return 'number'
  return metric.field.kind
}

/** The schema with its bounds lifted: a sum goes past any one value's maximum (and below a negative minimum). */
function unbounded(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(unbounded)
  if (typeof schema !== 'object' || schema === null) return schema
  const entries = Object.entries(schema).filter(([key, value]) => key !== 'maximum' && !(key === 'minimum' && (value as number) < 0))
  return Object.fromEntries(entries.map(([key, value]) => [key, key === 'examples' ? value : unbounded(value)]))
}

const withoutDefault = (schema: TSchema): TSchema => Object.fromEntries(Object.entries(schema).filter(([key]) => key !== 'default')) as TSchema

/** Nullable, unless it is already. */
function orNull(schema: TSchema): TSchema {
  const { type } = schema as { type?: string | string[] }
  if (Array.isArray(type)) return schema
  if (type === undefined) return { anyOf: [schema, Type.Null()] } as unknown as TSchema
  return { ...schema, type: [type, 'null'] } as unknown as TSchema
}

/** Built once per collection and API version at startup. */
export function aggregateViews(collection: Collection, version: number, item: TObject): AggregateViews {
  const spec = collection.aggregates!
  const views: Readonly<Record<string, FieldView>> = collection.options.versions?.[version] ?? {}
  const shown = item.properties as Record<string, TSchema>
  /** The value's view, when it has the field's kind (an average of integers is no rating). */
  const viewOf = (metric: Metric): FieldView | undefined => (metric.field && kindOf(metric) === metric.field.kind ? views[metric.field.name] : undefined)
  const convert = new Map<string, Convert>()
  for (const field of spec.groupable.values()) convert.set(field.name, shownAs(converterOf(field), views[field.name]))
  for (const metric of spec.metrics.values()) convert.set(metric.name, shownAs(converterOf({ kind: kindOf(metric) }), viewOf(metric)))

  function metricSchema(metric: Metric): TSchema {
    if (metric.fn === 'count') return Type.Integer({ format: 'int64', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'How many items match (in the group).' })
    const { field, fn } = metric
    const described = (schema: TSchema) => ({ ...orNull(schema), description: `The ${DESCRIBED[fn]} of ${field.name}; null when no item has one.` }) as TSchema
    if (fn === 'avg' && field.kind === 'integer') return described(Type.Number({ minimum: field.range![0], maximum: field.range![1] }))
    // A sum of integers is a bigint in SQL, answered as a number: exact while it is a safe integer.
    if (fn === 'sum' && field.kind === 'integer') return described(Type.Integer({ format: 'int64', minimum: field.range![0] >= 0 ? 0 : -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER }))
    const own = viewOf(metric)?.schema ?? shown[field.name]!
    return described((fn === 'sum' ? unbounded(own) : own) as TSchema)
  }

  // The serializer writes a property's default where the value is absent: a group has none.
  const answered = (schema: TSchema) => Type.Optional(withoutDefault(schema))
  const properties = {
    ...Object.fromEntries([...spec.groupable.keys()].map((name) => [name, answered(shown[name]!)])),
    ...Object.fromEntries([...spec.metrics.values()].map((metric) => [metric.name, answered(metricSchema(metric))])),
  }
  return {
    schema: Type.Object(properties, { additionalProperties: false, description: 'One group: its keys (the group_by fields) and its metrics.' }),
    represent(row, plan) {
      const out: Representation = {}
      for (const { name } of [...plan.groupBy, ...plan.metrics]) out[name] = convert.get(name)!(row[name])
      return out
    },
  }
}

const DESCRIBED: Readonly<Record<Exclude<Metric['fn'], 'count'>, string>> = { sum: 'sum', avg: 'average (rounded to 2 decimals)', min: 'least value', max: 'greatest value' }

/** The stored value as the items show it, then as the version does; null stays null. */
const shownAs = (convert: Convert, view: FieldView | undefined): Convert =>
  view ? (value) => (value === null || value === undefined ? null : view.read(convert(value))) : (value) => (value === undefined ? null : convert(value))

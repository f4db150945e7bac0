/**
 * What a collection lets `GET /{collection}/aggregates` group by and compute (DESIGN "Data over
 * time"), checked and derived once at startup: a mistake in the declaration fails the start.
 */
import type { Field, FieldKind } from '../fields.js'

/** The functions a metric applies to a field; `count` (the matching items) needs none. */
export type AggregateFunction = 'sum' | 'avg' | 'min' | 'max'

/** A collection's declaration of its aggregates. */
export interface AggregatesOptions {
  /** Fields the answer may be grouped by: each group is one value of them, as the items show it. */
  groupBy: readonly string[]
  /** Per field, the functions that may aggregate it: `{ total: ['sum', 'avg'] }` allows `metrics=sum:total,avg:total`. */
  metrics: Readonly<Record<string, readonly AggregateFunction[]>>
}

/** One metric an answer may have: `count`, or a function of a field. Its name in the answer is `count` or `<fn>_<field>`. */
export type Metric = { readonly fn: 'count'; readonly name: 'count'; readonly field?: undefined } | { readonly fn: AggregateFunction; readonly name: string; readonly field: Field }

/** What a collection's aggregates may group by and compute, by the names the query string uses. */
export interface AggregateSpec {
  /** Groupable fields, by name. */
  readonly groupable: ReadonlyMap<string, Field>
  /** Every metric, by its name in `metrics=`: `count`, `sum:total`... */
  readonly metrics: ReadonlyMap<string, Metric>
}

/** `a string field`, `an enum field`. */
const aKind = (kind: FieldKind) => `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} field`

/** Kinds a group's key may be: one value per item, compared for equality (not text lists). */
const GROUPABLE: ReadonlySet<FieldKind> = new Set(['string', 'integer', 'number', 'boolean', 'datetime', 'uuid', 'enum'])
/** Kinds each function takes: sums and averages of numbers, the least and greatest of what sorts. */
const TAKES: Readonly<Record<AggregateFunction, ReadonlySet<FieldKind>>> = {
  sum: new Set(['integer', 'number']),
  avg: new Set(['integer', 'number']),
  min: new Set(['integer', 'number', 'datetime', 'string']),
  max: new Set(['integer', 'number', 'datetime', 'string']),
}

/**
 * Checks the declaration against the collection's fields and derives the spec. Only stored
 * fields: a computed one is no column to group or aggregate in SQL.
 */
export function aggregateSpec(collection: string, declared: AggregatesOptions, fields: ReadonlyMap<string, Field>): AggregateSpec {
  const fail = (reason: string) => new TypeError(`collection ${collection}: aggregates: ${reason}`)
  const stored = (name: string, what: string) => {
    const field = fields.get(name)
    if (!field) throw fail(`${what} field "${name}" is not in the item schema`)
    if (field.computed) throw fail(`${what} field "${name}" is computed, not stored`)
    return field
  }
  const groupable = new Map<string, Field>()
  for (const name of declared.groupBy) {
    const field = stored(name, 'group_by')
    if (!GROUPABLE.has(field.kind)) throw fail(`cannot group by "${name}", ${aKind(field.kind)}`)
    groupable.set(name, field)
  }
  const metrics = new Map<string, Metric>([['count', { fn: 'count', name: 'count' }]])
  for (const [name, functions] of Object.entries(declared.metrics)) {
    const field = stored(name, 'metric')
    for (const fn of functions) {
      if (!TAKES[fn]) throw fail(`"${fn}" is not a function; use sum, avg, min or max`)
      if (!TAKES[fn].has(field.kind)) throw fail(`${fn} cannot take "${name}", ${aKind(field.kind)}; ${fn} takes ${[...TAKES[fn]].join(', ')} fields`)
      metrics.set(`${fn}:${name}`, { fn, name: `${fn}_${name}`, field })
    }
  }
  // A group's key and a metric share the answer's object: their names must not collide.
  const names = [...metrics.values()].map((metric) => metric.name)
  const clash = declared.groupBy.find((name) => names.includes(name))
  if (clash) throw fail(`group_by field "${clash}" has a metric's name`)
  return { groupable, metrics }
}

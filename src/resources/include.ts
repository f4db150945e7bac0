/**
 * `include=<relation>[,<relation>]` (DESIGN "Reading"): related items embedded under the
 * relation's name, in the same statement as the rows (a subquery per relation, `row_to_json` and
 * `json_agg`: never a query per row). One level, plus one dotted step (`include=items.product`),
 * at most MAX_RELATIONS relations; children capped (`include[reviews][size]`, MAX_PAGE_SIZE at
 * most); `fields[<relation>]` picks their fields. Each embedded item obeys its collection's rules
 * for this caller: an item they may not read is left out of a list and `null` in place of one,
 * and fields they may not read are left out.
 */
import { isAdmin, standingOf, type Standing } from '../auth/access.js'
import type { Caller } from '../auth/caller.js'
import { ApiError } from '../errors.js'
import type { Collection } from './collection.js'
import { Type, type TSchema } from 'typebox'
import { Int32 } from '../schema-types.js'
import { fieldSelector, fieldsParameter, type FieldSelection, type FieldSelector } from './field-selection.js'
import { INCLUDE_KEY } from './list-query/parse.js'
import { closestName } from './list-query/suggest.js'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, type AddValue } from './list-query/plan.js'
import { quote } from './list-query/to-sql.js'
import type { Relation } from './relations.js'
import type { Representation, Row } from './represent.js'
import { shelfCondition } from './shelf.js'
import type { Views } from './views.js'

/** Most relations one request embeds, a dotted step counted as one more. */
export const MAX_RELATIONS = 3

export interface Embedding {
  readonly relation: Relation
  /** The related collection's views in this API version. */
  readonly views: Views
  /** `fields[<relation>]`; its summary otherwise. */
  readonly selection: FieldSelection | undefined
  /** How many children at most (`many` relations). */
  readonly size: number
  /** The dotted step below it (`items.product`: `product` of each item). */
  readonly nested: Embedding | undefined
  /** The column of the row that carries it. */
  readonly key: string
}

/** The relations a request embeds; undefined when it has no `include`. */
export type IncludePlan = readonly Embedding[]

/** The parameter's value, as a query string parser gives it. */
type RawQuery = Record<string, unknown>

const invalid = (parameter: string, reason: string) => new ApiError('INVALID_PARAMETER', `Invalid query parameter: ${parameter}.`, [{ field: parameter, reason }])

/** Built once per collection and API version at startup: what `include` can name, and each related collection's views there. */
export function includer(
  collection: Collection,
  relations: ReadonlyMap<Collection, ReadonlyMap<string, Relation>>,
  viewsOf: (collection: Collection) => Views,
): (query: RawQuery) => IncludePlan | undefined {
  const selectors = new Map<Collection, FieldSelector>()
  const selectorOf = (target: Collection) => {
    let select = selectors.get(target)
    if (!select) selectors.set(target, (select = fieldSelector(target)))
    return select
  }
  const namesOf = (of: Collection) => [...(relations.get(of)?.keys() ?? [])]

  /** The embedding of relation `name` of `of`; `path` is how the query names it (`reviews`, `items.product`). */
  function embedding(of: Collection, name: string, path: string, depth: number, query: RawQuery, used: Set<string>): Embedding {
    const relation = relations.get(of)?.get(name)
    if (!relation) {
      const known = namesOf(of)
      const hint = closestName(name, known)
      throw invalid('include', `${of.name} has no relation "${name}"${hint ? ` (did you mean ${hint}?)` : ''}${known.length > 0 ? `; relations: ${known.join(', ')}` : ''}`)
    }
    const sizeKey = `include[${path}][size]`
    const fieldsKey = `fields[${path}]`
    used.add(sizeKey).add(fieldsKey)
    const rawSize = query[sizeKey]
    let size = DEFAULT_PAGE_SIZE
    if (rawSize !== undefined) {
      if (relation.kind !== 'many') throw invalid(sizeKey, `${name} is one item, not a list`)
      const value = typeof rawSize === 'string' && /^\d{1,3}$/.test(rawSize) ? Number(rawSize) : NaN
      if (!(value >= 1 && value <= MAX_PAGE_SIZE)) throw invalid(sizeKey, `must be an integer from 1 to ${MAX_PAGE_SIZE}`)
      size = value
    }
    let selection: FieldSelection | undefined
    try {
      selection = selectorOf(relation.target)(query[fieldsKey])
    } catch (error) {
      if (error instanceof ApiError) throw invalid(fieldsKey, error.details[0]!.reason)
      throw error
    }
    return { relation, views: viewsOf(relation.target), selection, size, nested: undefined, key: `__embed_${depth}_${name}` }
  }

  return (query) => {
    const raw = query.include
    if (raw === undefined) {
      const stray = Object.keys(query).find((key) => INCLUDE_KEY.test(key))
      if (stray) throw invalid(stray, 'needs include= naming the relation')
      return undefined
    }
    if (typeof raw !== 'string') throw invalid('include', 'must be given at most once: name every relation in one list')
    const paths = raw.split(',').map((entry) => entry.trim())
    if (paths.some((path) => path === '' || path.split('.').some((step) => step === ''))) {
      throw invalid('include', 'must be a comma-separated list of relations, such as include=reviews or include=items.product')
    }
    if (paths.some((path) => path.split('.').length > 2)) throw invalid('include', 'goes one dotted step deep at most, such as items.product')
    const used = new Set<string>()
    const top = new Map<string, Embedding>()
    let count = 0
    // A bare relation first, then the dotted steps below it, whatever their order in the list.
    for (const path of [...new Set(paths)].sort((a, b) => a.split('.').length - b.split('.').length)) {
      const [first, second] = path.split('.') as [string, string | undefined]
      let outer = top.get(first)
      if (!outer) {
        outer = embedding(collection, first, first, 0, query, used)
        top.set(first, outer)
        count++
      }
      if (second !== undefined) {
        if (outer.nested) throw invalid('include', `embeds one relation below ${first}: ${first}.${outer.nested.relation.name} or ${path}`)
        top.set(first, { ...outer, nested: embedding(outer.relation.target, second, path, 1, query, used) })
        count++
      }
    }
    if (count > MAX_RELATIONS) throw invalid('include', `embeds at most ${MAX_RELATIONS} relations, a dotted step counted as one`)
    const stray = Object.keys(query).find((key) => INCLUDE_KEY.test(key) && !used.has(key))
    if (stray) throw invalid(stray, `names no relation this include embeds (${[...top.keys()].join(', ')})`)
    return [...top.values()]
  }
}

/**
 * The condition on embedded rows (alias `alias`) under which `caller` may read them: true for
 * all, false for none, else SQL. Their collection's read rule, as a read of them would apply it,
 * and live items only: an item in the trash is embedded, and filtered through, as one deleted.
 */
export function readableBy(target: Collection, caller: Caller | null, alias: string, add: AddValue): boolean | string {
  const rule = readRule(target, caller, alias, add)
  const live = shelfCondition(target.options.trash !== undefined, {}, alias)
  if (!live || rule === false) return rule
  return rule === true ? live : `${rule} AND ${live}`
}

function readRule(target: Collection, caller: Caller | null, alias: string, add: AddValue): boolean | string {
  switch (target.options.access.read) {
    case 'public':
      return true
    case 'authenticated':
      return caller !== null
    case 'admin':
      return isAdmin(caller)
    case 'nobody':
      return false
    case 'owner-or-admin': {
      if (isAdmin(caller)) return true
      if (!caller) return false
      const { ownership } = target
      if (ownership.kind === 'own') return `${alias}.${quote(ownership.column)} = ${add(caller.user.id)}`
      if (ownership.kind === 'none') return false
      // Owned by its parent's owner.
      const parent = target.options.parent!
      const parentTable = quote(parent.collection.options.table ?? parent.collection.name)
      return `EXISTS (SELECT FROM ${parentTable} o WHERE o."id" = ${alias}.${quote(parent.field)} AND o.${quote(ownership.column)} = ${add(caller.user.id)})`
    }
  }
}

/** The columns an embedded item needs: its fields' (those asked for, or its summary's), and its owner's, for its standing. */
export function embeddedColumns(target: Collection, selection: FieldSelection | undefined): string[] {
  if (selection) return [...selection.columns]
  const computed = target.options.computed ?? {}
  const owner = target.ownership.kind === 'own' ? [target.ownership.column] : []
  return [...new Set(['id', ...target.summaryFields.flatMap((field) => (field.computed ? computed[field.name]!.from : [field.name])), ...owner])]
}

/** The select list's additions for a plan: one subquery per relation, each an expression on the row `outer`. */
export function embeddedSelect(plan: IncludePlan, caller: Caller | null, outer: string, add: AddValue): string {
  return plan.map((embedding) => `, ${subquery(embedding, caller, outer, add, 0)} AS ${quote(embedding.key)}`).join('')
}

function subquery(embedding: Embedding, caller: Caller | null, outer: string, add: AddValue, depth: number): string {
  const { relation } = embedding
  const target = relation.target
  const alias = `e${depth}`
  const rule = readableBy(target, caller, alias, add)
  if (rule === false) return relation.kind === 'one' ? 'NULL::json' : `'[]'::json`
  const columns = embeddedColumns(target, embedding.selection).map((column) => `${alias}.${quote(column)}`)
  if (embedding.nested) columns.push(`${subquery(embedding.nested, caller, alias, add, depth + 1)} AS ${quote(embedding.nested.key)}`)
  const joined = relation.kind === 'one' ? `${alias}."id" = ${outer}.${quote(relation.column)}` : `${alias}.${quote(relation.column)} = ${outer}."id"`
  const rows = `SELECT ${columns.join(', ')} FROM ${quote(target.options.table ?? target.name)} ${alias} WHERE ${joined}${rule === true ? '' : ` AND ${rule}`}`
  const x = `x${depth}`
  return relation.kind === 'one'
    ? `(SELECT row_to_json(${x}) FROM (${rows}) ${x})`
    : `(SELECT coalesce(json_agg(${x} ORDER BY ${x}."id"), '[]'::json) FROM (${rows} ORDER BY ${alias}."id" LIMIT ${embedding.size}) ${x})`
}

/** The embedded items of a row, by relation name, as the caller may see them. */
export function embedded(plan: IncludePlan, row: Row, caller: Caller | null): Representation {
  const out: Representation = {}
  for (const embedding of plan) out[embedding.relation.name] = present(embedding, row[embedding.key], caller)
  return out
}

function present(embedding: Embedding, value: unknown, caller: Caller | null): unknown {
  if (embedding.relation.kind === 'one') return value === null || value === undefined ? null : item(embedding, value as Row, caller)
  return (value as Row[]).map((row) => item(embedding, row, caller))
}

function item(embedding: Embedding, row: Row, caller: Caller | null): Representation {
  const { target } = embedding.relation
  const standing: Standing = standingOf(caller, target.ownership.kind === 'own' ? row[target.ownership.column] : undefined)
  const representation = embedding.views.summary(row, standing, embedding.selection)
  if (embedding.nested) representation[embedding.nested.relation.name] = present(embedding.nested, row[embedding.nested.key], caller)
  return representation
}

/** The query parameters `include` reads, as the document shows them: the relations, and each one's size and fields. */
export function includeParameters(collection: Collection, relations: ReadonlyMap<Collection, ReadonlyMap<string, Relation>>): Record<string, TSchema> {
  const own = [...(relations.get(collection)?.values() ?? [])]
  if (own.length === 0) return {}
  const steps = own.flatMap((relation) => [
    { path: relation.name, relation },
    ...[...(relations.get(relation.target)?.values() ?? [])].map((below) => ({ path: `${relation.name}.${below.name}`, relation: below })),
  ])
  const name = `(${steps.map(({ path }) => path.replace('.', '\\.')).join('|')})`
  const parameters: Record<string, TSchema> = {
    include: Type.String({
      pattern: `^${name}(,${name})*$`,
      maxLength: steps.map(({ path }) => path.length + 1).reduce((a, b) => a + b, 0),
      description: `Related items to embed, comma-separated: ${steps.map(({ path }) => path).join(', ')}. At most ${MAX_RELATIONS}, a dotted step counted as one.`,
    }),
  }
  for (const { path, relation } of steps) {
    if (relation.kind === 'many') {
      parameters[`include[${path}][size]`] = Int32({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: `How many ${relation.name} to embed at most, the first by their order.` })
    }
    parameters[`fields[${path}]`] = fieldsParameter(relation.target)
  }
  return parameters
}

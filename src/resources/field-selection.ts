/**
 * `fields=name,price` (DESIGN "Reading"): the fields a representation is asked to have, on lists,
 * items and the answers of writes. `id` is always there; any field of the detail representation
 * may be asked for, on a list too; a name the collection does not have is a 400 naming it. A field
 * the caller may not read is left out by the views, as it is from the default representation.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type, type TSchema } from 'typebox'
import { ApiError } from '../errors.js'
import type { Collection } from './collection.js'
import type { Field } from './fields.js'
import { closestName } from './list-query/suggest.js'

/** Longest `fields` value: every field of the widest collection, named once, fits in it many times over. */
export const MAX_FIELDS_LENGTH = 1000

export interface FieldSelection {
  /** The fields asked for and `id`, in the item schema's order. */
  readonly fields: readonly Field[]
  /** The columns a read of them selects: theirs, what computed ones read, the owner and `updated_at` (the validators). */
  readonly columns: readonly string[]
  /** Names the set in an item's ETag: one bit per field of the item schema, in base 36. */
  readonly tag: string
}

/** Selections parsed per collection, by the parameter's text; past this many, parsed again each time. */
const MAX_KEPT = 256

/** The fields of one request, from its `fields` parameter: undefined when it has none. */
export type FieldSelector = (raw: unknown) => FieldSelection | undefined

/** Built once per collection at startup. */
export function fieldSelector(collection: Collection): FieldSelector {
  const names = collection.fields.map((field) => field.name)
  const computed = collection.options.computed ?? {}
  const always = ['id', 'updated_at', ...(collection.ownership.kind === 'own' ? [collection.ownership.column] : [])]
  const kept = new Map<string, FieldSelection>()

  function parse(raw: string): FieldSelection {
    const invalid = (reason: string) => new ApiError('INVALID_PARAMETER', 'Invalid query parameter: fields.', [{ field: 'fields', reason }])
    if (raw.length > MAX_FIELDS_LENGTH) throw invalid(`must be at most ${MAX_FIELDS_LENGTH} characters`)
    const asked = new Set(raw.split(',').map((name) => name.trim()))
    if (asked.has('')) throw invalid('must be a comma-separated list of field names, such as fields=id,name')
    const unknown = [...asked].filter((name) => !collection.field.has(name))
    if (unknown.length > 0) {
      const hint = closestName(unknown[0]!, names)
      throw invalid(`has no field ${unknown.map((name) => `"${name}"`).join(', ')}${hint ? ` (did you mean ${hint}?)` : ''}; fields: ${names.join(', ')}`)
    }
    const fields = collection.fields.filter((field) => field.name === 'id' || asked.has(field.name))
    const mask = collection.fields.reduce((bits, field, i) => (asked.has(field.name) ? bits | (1n << BigInt(i)) : bits), 0n)
    return {
      fields,
      columns: [...new Set([...always, ...fields.flatMap((field) => (field.computed ? computed[field.name]!.from : [field.name]))])],
      tag: mask.toString(36),
    }
  }

  return (raw) => {
    if (raw === undefined) return undefined
    if (typeof raw !== 'string') {
      throw new ApiError('INVALID_PARAMETER', 'Invalid query parameter: fields.', [{ field: 'fields', reason: 'must be given at most once: name every field in one list' }])
    }
    let selection = kept.get(raw)
    if (!selection) {
      selection = parse(raw)
      if (kept.size < MAX_KEPT) kept.set(raw, selection)
    }
    return selection
  }
}

/**
 * The body of a representation: as it is, or, when it is not the route's (`asked`: the fields a
 * client asked for, or related items embedded), written out here in the media type negotiated
 * for it: the route's serializer follows the default representation's schema, which requires its
 * fields and drops any other.
 */
export function bodyOf<T>(request: FastifyRequest, reply: FastifyReply, asked: boolean, body: T): T | string {
  if (!asked) return body
  reply.type(request.responseType)
  return JSON.stringify(body)
}

/** The `fields` parameter as the document shows it: the collection's field names, comma-separated. */
export function fieldsParameter(collection: Collection): TSchema {
  const name = `(${collection.fields.map((field) => field.name).join('|')})`
  return Type.String({
    pattern: `^${name}(,${name})*$`,
    maxLength: MAX_FIELDS_LENGTH,
    description: 'Only these fields, comma-separated, and id: any field of the item, on a list too. A field you may not read is left out.',
  })
}

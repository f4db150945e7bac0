/** Turns validated request bodies into the data a write stores: defaults, merge patches, read-only checks. */
import { ApiError, type ErrorDetail } from '../errors.js'
import type { Collection, WriteData } from './collection.js'
import type { Field } from './fields.js'
import type { Representation, Row } from './represent.js'

type Body = Record<string, unknown>

/** An absent field and `null` mean the same on POST and PUT: the field's default, or null. */
const valueOrDefault = (field: Field, value: unknown): unknown => (value === undefined || value === null ? field.default : value)

/**
 * The data of a POST or PUT body: every writable field, defaults filled in; except the fields
 * this caller may not write, which keep their stored value (or the database's default).
 */
export function fullData(collection: Collection, body: Body, locked: { has(name: string): boolean } = new Set()): WriteData {
  const data: WriteData = {}
  for (const field of collection.fields) {
    if (!field.readOnly && !locked.has(field.name)) data[field.name] = valueOrDefault(field, body[field.name])
  }
  return data
}

/** RFC 7396 on a flat object: named members change, `null` clears (back to the default), arrays replace. */
export function patchData(collection: Collection, body: Body): WriteData {
  const data: WriteData = {}
  for (const [name, value] of Object.entries(body)) {
    const field = collection.field.get(name)
    // Write-only fields (a password) are stored apart, transformed.
    if (field) data[name] = valueOrDefault(field, value)
  }
  return data
}

/** The data of a body: a replace's is the whole item (fullData), a patch's what it names (patchData). */
export const writeData = (collection: Collection, operation: 'replace' | 'patch', body: Body, locked: { has(name: string): boolean }): WriteData =>
  operation === 'replace' ? fullData(collection, body, locked) : patchData(collection, body)

export const same = (a: unknown, b: unknown): boolean => a === b || JSON.stringify(a) === JSON.stringify(b)

/**
 * A PUT may send back the read-only fields a GET gave it (GET, edit, PUT). Those that identify the
 * item must be unchanged; those the server maintains (updated_at, counters) may be stale and are
 * ignored, so the round trip works after others changed them. Throws VALIDATION_ERROR naming
 * every identifying field whose value differs.
 */
export function checkReadOnly(collection: Collection, body: Body, current: Representation): void {
  const details: ErrorDetail[] = []
  for (const name of collection.identity) {
    if (name in body && !same(body[name], current[name])) details.push({ field: name, reason: 'is read-only and differs from the stored value' })
  }
  if (details.length > 0) throw new ApiError('VALIDATION_ERROR', undefined, details)
}

/** The part of `data` that differs from the current representation; empty when the write changes nothing. */
export function changes(data: WriteData, current: Representation): WriteData {
  const changed: WriteData = {}
  for (const [name, value] of Object.entries(data)) {
    if (!same(value, current[name])) changed[name] = value
  }
  return changed
}

/** The row a write stores for write data: by column, timestamps as Dates. */
export function toColumns(collection: Collection, data: WriteData): Row {
  const row: Row = {}
  for (const [name, value] of Object.entries(data)) {
    const field = collection.field.get(name)!
    row[field.name] = field.kind === 'datetime' && typeof value === 'string' ? new Date(value) : value
  }
  return row
}

/** Maps JSON Schema (Ajv) validation errors to the spec's `details[]`: one entry per failing field. */
import type { ErrorDetail } from '../errors.js'

/** The parts of an Ajv error the mapping reads. */
export interface SchemaError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

/** `/tags/2` -> `tags[2]`, `/address/zip` -> `address.zip` (RFC 6901 escapes undone). */
export function fieldPath(pointer: string, child?: string): string {
  const parts = pointer.split('/').slice(1)
  if (child !== undefined) parts.push(child)
  let path = ''
  for (const raw of parts) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`
  }
  return path
}

function reasonOf(error: SchemaError, readOnly: ReadonlySet<string>): ErrorDetail {
  switch (error.keyword) {
    case 'required':
      return { field: fieldPath(error.instancePath, String(error.params.missingProperty)), reason: 'is required' }
    case 'additionalProperties': {
      const name = String(error.params.additionalProperty)
      // The body's own fields, or an item's in an array of them.
      const top = error.instancePath === '' || /^\/\d+$/.test(error.instancePath)
      const reason = top && readOnly.has(name) ? 'is read-only' : 'is not a known field'
      return { field: fieldPath(error.instancePath, name), reason }
    }
    case 'type': {
      const type = String(error.params.type).replace(',', ' or ')
      return { field: fieldPath(error.instancePath), reason: `must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}` }
    }
    case 'enum':
      return {
        field: fieldPath(error.instancePath),
        reason: `must be one of ${(error.params.allowedValues as unknown[]).filter((v) => v !== null).join(', ')}`,
      }
    default:
      return { field: fieldPath(error.instancePath), reason: error.message ?? 'is not valid' }
  }
}

/** Every failing field once per reason, in the order the validator found them. */
export function validationDetails(errors: readonly SchemaError[], readOnly: ReadonlySet<string>): ErrorDetail[] {
  const seen = new Set<string>()
  const details: ErrorDetail[] = []
  for (const error of errors) {
    // `if` fails when its branch does, whose own errors say why.
    if (error.keyword === 'if') continue
    const detail = reasonOf(error, readOnly)
    const key = `${detail.field}\u0000${detail.reason}`
    if (seen.has(key)) continue
    seen.add(key)
    details.push(detail)
  }
  return details
}

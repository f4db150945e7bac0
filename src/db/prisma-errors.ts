/** Translates Prisma and driver errors into catalogue errors at the database seam. */
import { ApiError } from '../errors.js'

/** Seconds a client should wait before retrying when the database cannot be reached. */
export const DATABASE_RETRY_AFTER = 5

interface DriverCause {
  kind?: string
  code?: string
  severity?: string
  constraint?: { fields?: string[]; index?: string }
}

interface PrismaLikeError {
  code?: string
  message?: string
  severity?: string
  meta?: { driverAdapterError?: { cause?: DriverCause }; target?: string[] | string }
}

/** Prisma's names for "the database is not there right now" (driver adapter kinds, engine codes). */
const UNAVAILABLE_KINDS = new Set(['DatabaseNotReachable', 'ConnectionClosed', 'TooManyConnections', 'SocketTimeout', 'TlsConnectionError'])
/**
 * SQLSTATEs and socket errors that say the same: 57014 a statement past its time limit, 57P01-05
 * a server shutting down, crashed or refusing, 3D000 a database dropped; and the socket's own.
 * Whole classes: 08 (connection exception) and 53 (insufficient resources: too many connections).
 */
const UNAVAILABLE_CODES = new Set([
  'P1001', 'P1002', 'P1008', 'P1017', 'P2024', '57014', '57P01', '57P02', '57P03', '57P04', '57P05', '3D000',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
])
const UNAVAILABLE_CLASSES = /^(08|53)/
/** node-postgres reports a full pool and a lost connection by message only. */
const UNAVAILABLE_MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Cannot use a pool after calling end)/

const unavailableCode = (code: string | undefined) => code !== undefined && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_CLASSES.test(code))

/**
 * 503 with Retry-After when `error` says the database cannot serve right now (unreachable,
 * refusing connections, a full pool, a statement past its time limit), from the driver or from
 * Prisma; undefined otherwise. A FATAL error is always the connection's, never the request's:
 * PostgreSQL's "database is not currently accepting connections" is SQLSTATE 55000, FATAL.
 */
export function unavailable(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, message, severity, meta } = error as PrismaLikeError
  const cause = meta?.driverAdapterError?.cause
  const down =
    unavailableCode(code) ||
    unavailableCode(cause?.code) ||
    UNAVAILABLE_KINDS.has(cause?.kind ?? '') ||
    severity === 'FATAL' ||
    cause?.severity === 'FATAL' ||
    UNAVAILABLE_MESSAGES.test(message ?? '')
  if (!down) return undefined
  return new ApiError('SERVICE_UNAVAILABLE', undefined, [], { cause: error, headers: { 'retry-after': String(DATABASE_RETRY_AFTER) } })
}

/** What a table's unique constraint covers, for naming the field in a 409. */
export interface ConflictContext {
  /** JSON field names of the collection; columns are the same names (snake_case). */
  fields: readonly string[]
  /** A delete: a foreign key violation means other items still refer to this one. */
  deleting?: boolean
}

/**
 * Which fields a constraint violation concerns. PostgreSQL's driver reports the constraint
 * (`products_sku_key`), PGlite the columns; Prisma names them `<table>_<columns>_key` / `_fkey`.
 */
function constraintFields(cause: DriverCause | undefined, context: ConflictContext): string[] {
  const columns = cause?.constraint?.fields
  if (columns?.length) return columns
  const name = (cause?.constraint?.index ?? '').replace(/_(key|fkey)$/, '')
  // Drop the table prefix: the first split whose remainder is made only of known columns.
  for (let at = name.indexOf('_'); at !== -1; at = name.indexOf('_', at + 1)) {
    const split = splitColumns(name.slice(at + 1), context.fields)
    if (split.length > 0) return split
  }
  return []
}

function splitColumns(rest: string, names: readonly string[]): string[] {
  const found: string[] = []
  while (rest !== '') {
    const next = names.filter((n) => rest === n || rest.startsWith(`${n}_`)).sort((a, b) => b.length - a.length)[0]
    if (next === undefined) return []
    found.push(next)
    rest = rest.slice(next.length + 1)
  }
  return found
}

/** SQLSTATEs of a statement run on the driver itself (the hand-written reads and updates) to Prisma's codes. */
const SQLSTATE_TO_PRISMA: Record<string, string> = { '23505': 'P2002', '23503': 'P2003', '23001': 'P2003', '22003': 'P2020' }

/** The catalogue error for a database error, or undefined when it is not one we can explain. */
export function translateDatabaseError(error: unknown, context: ConflictContext): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const down = unavailable(error)
  if (down) return down
  const driver = error as { code?: string; constraint?: string }
  const prismaCode = SQLSTATE_TO_PRISMA[driver.code ?? '']
  const { code: reported, meta } = prismaCode
    ? { code: prismaCode, meta: { driverAdapterError: { cause: { constraint: { index: driver.constraint } } } } }
    : (error as PrismaLikeError)
  const cause = meta?.driverAdapterError?.cause
  // Prisma reports some database errors only by their SQLSTATE (P2039, "database error"): PGlite's
  // 23001 for a RESTRICT foreign key, for one.
  const code = reported === 'P2039' ? (SQLSTATE_TO_PRISMA[cause?.code ?? ''] ?? reported) : reported
  switch (code) {
    case 'P2002': {
      const fields = constraintFields(cause, context)
      const details = fields.map((field) => ({ field, reason: 'is already taken' }))
      return new ApiError('CONFLICT', `An item with the same ${fields.join(' and ') || 'unique value'} already exists.`, details, { cause: error })
    }
    case 'P2025':
      return new ApiError('NOT_FOUND', undefined, [], { cause: error })
    case 'P2003': {
      if (context.deleting) return new ApiError('CONFLICT', 'Other items still refer to this one; delete or change them first.', [], { cause: error })
      const details = constraintFields(cause, context).map((field) => ({ field, reason: 'refers to an item that does not exist' }))
      return new ApiError('VALIDATION_ERROR', 'The request refers to an item that does not exist.', details, { cause: error })
    }
    // A value out of its column's range, such as a sum a trigger keeps.
    case 'P2020':
      return new ApiError('VALIDATION_ERROR', 'A value would be out of the range the service stores.', [], { cause: error })
    default:
      return undefined
  }
}

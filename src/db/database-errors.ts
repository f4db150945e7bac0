/** Translates driver errors (node-postgres', PGlite's) into catalogue errors: at the database seam, and only there. */
import { ApiError } from '../errors.js'

/** Seconds a client should wait before retrying when the database cannot be reached. */
export const DATABASE_RETRY_AFTER = 5

/** The fields of a driver's error that say the database cannot serve. */
interface ConnectionError {
  code?: string
  message?: string
  severity?: string
}

/**
 * SQLSTATEs and socket errors that say the same: 57014 a statement past its time limit, 57P01-05
 * a server shutting down, crashed or refusing, 3D000 a database dropped; and the socket's own.
 * Whole classes: 08 (connection exception) and 53 (insufficient resources: too many connections).
 */
const UNAVAILABLE_CODES = new Set([
  '57014', '57P01', '57P02', '57P03', '57P04', '57P05', '3D000',
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH',
])
const UNAVAILABLE_CLASSES = /^(08|53)/
/** node-postgres reports a full pool and a lost connection by message only. */
const UNAVAILABLE_MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Cannot use a pool after calling end)/

const unavailableCode = (code: string | undefined) => code !== undefined && (UNAVAILABLE_CODES.has(code) || UNAVAILABLE_CLASSES.test(code))

/**
 * 503 with Retry-After when `error` says the database cannot serve right now (unreachable,
 * refusing connections, a full pool, a statement past its time limit); undefined otherwise. A FATAL error is always the connection's, never the request's:
 * PostgreSQL's "database is not currently accepting connections" is SQLSTATE 55000, FATAL.
 */
export function unavailable(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const { code, message, severity } = error as ConnectionError
  const down = unavailableCode(code) || severity === 'FATAL' || UNAVAILABLE_MESSAGES.test(message ?? '')
  if (!down) return undefined
  return new ApiError('SERVICE_UNAVAILABLE', undefined, [], { cause: error, headers: { 'retry-after': String(DATABASE_RETRY_AFTER) } })
}

/** SQLSTATEs a transaction retries: it lost a deadlock or a serialization check (nothing was written). */
export const RETRYABLE_CODES = new Set(['40P01', '40001'])

/** A driver's error: pg and PGlite report the same fields of PostgreSQL's error message. */
interface DriverError {
  code?: string
  detail?: string
  constraint?: string
  table?: string
}

/**
 * The columns a constraint violation names. PostgreSQL's detail lists them the same way for
 * every constraint and both drivers: `Key (product_id, author_id)=(...) already exists.`
 */
function keyColumns(error: DriverError): string[] {
  const listed = /^Key \(([^)]*)\)=/.exec(error.detail ?? '')?.[1]
  if (listed) return listed.split(', ')
  // Without a detail (a constraint over an expression): the constraint's name, less its table and suffix.
  const name = (error.constraint ?? '').replace(/_(key|fkey)$/, '')
  const table = error.table ? `${error.table}_` : ''
  return name.startsWith(table) && name.length > table.length ? [name.slice(table.length)] : []
}

/**
 * The catalogue error for a database error, or undefined when it is not one we can explain (a
 * 500). Column names are the JSON field names (snake_case), so details name fields.
 */
export function translateDatabaseError(error: unknown): ApiError | undefined {
  if (typeof error !== 'object' || error === null) return undefined
  const down = unavailable(error)
  if (down) return down
  const driver = error as DriverError
  switch (driver.code) {
    case '23505': {
      const fields = keyColumns(driver)
      const details = fields.map((field) => ({ field, reason: 'is already taken' }))
      return new ApiError('CONFLICT', `An item with the same ${fields.join(' and ') || 'unique value'} already exists.`, details, { cause: error })
    }
    // A row others still refer to: RESTRICT reports 23001, NO ACTION 23503 with "still referenced".
    case '23001':
      return stillReferenced(error)
    case '23503': {
      if (/is (still )?referenced from/.test(driver.detail ?? '')) return stillReferenced(error)
      const details = keyColumns(driver).map((field) => ({ field, reason: 'refers to an item that does not exist' }))
      return new ApiError('VALIDATION_ERROR', 'The request refers to an item that does not exist.', details, { cause: error })
    }
    // A value out of its column's range, such as a sum a trigger keeps.
    case '22003':
      return new ApiError('VALIDATION_ERROR', 'A value would be out of the range the service stores.', [], { cause: error })
    default:
      return undefined
  }
}

const stillReferenced = (cause: unknown) => new ApiError('CONFLICT', 'Other items still refer to this one; delete or change them first.', [], { cause })

/**
 * A pooler refusing a parameter the driver sends when connecting: PgBouncer 1.18 in transaction
 * mode answers `unsupported startup parameter: statement_timeout` (SQLSTATE 08P01, FATAL).
 */
const REFUSED_STARTUP_PARAMETER = /^unsupported startup parameter: (\w+)/

/**
 * What an operator reads when the database stops a start or a command: the driver's own message
 * (`unavailable` keeps it as the cause of the client's "temporarily unavailable"), and the fix
 * where the cause is known.
 */
export function operatorMessage(error: unknown): string {
  const cause = error instanceof ApiError && error.code === 'SERVICE_UNAVAILABLE' && error.cause !== undefined ? error.cause : error
  const message = cause instanceof Error ? cause.message : String(cause)
  const parameter = REFUSED_STARTUP_PARAMETER.exec(message)?.[1]
  if (!parameter) return message
  return (
    `${message}: DATABASE_URL leads to a connection pooler (PgBouncer) that refuses the ${parameter} the service sends when connecting; ` +
    `add ?pgbouncer=true to DATABASE_URL (a pooler in transaction mode needs it) and give the database role its ${parameter}, ` +
    `or list ${parameter} in ignore_startup_parameters in pgbouncer.ini (docs/how-to/deploy.md, PgBouncer)`
  )
}

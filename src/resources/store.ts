/**
 * The collection factory's data functions, hand-written statements prepared once per shape: one
 * row (in the write's transaction when there is one), and a list page with its count. Their rows
 * have the Prisma model's field names, so everything downstream is shared. Errors arrive
 * translated from the database seam (src/db/client.ts).
 */
import { createHash } from 'node:crypto'
import type { Database, Statements } from '../db/client.js'
import { eventsOf, timeLeft } from '../db/events.js'
import { recordItemOf, type KeyClaim } from '../db/idempotency.js'
import { RELEVANCE, type ListPlan } from './list-query/plan.js'
import { aggregateStatement, boundedCountStatement, COMPLETE, exportPageStatement, keptCountOf, listStatement, matchingStatement, quote, TOTAL, type AggregateQuery } from './list-query/to-sql.js'
import type { Row } from './represent.js'
import { shelfCondition, TRASHED, type Scope } from './shelf.js'

export { TRASHED, type Scope, type Shelf } from './shelf.js'

const andShelf = (trash: boolean, scope: Scope) => {
  const condition = shelfCondition(trash, scope)
  return condition && ` AND ${condition}`
}

/**
 * More of a read's select list (`, (subquery) AS "name"` ...), as expressions on the row `outer`
 * (the table, or a list's alias), its values added as parameters with `add`.
 */
export type Extra = (outer: string, add: (value: unknown) => string) => string

/**
 * How a write holds the row it read until its transaction ends: `keep` only against its deletion
 * (FOR KEY SHARE: a parent while its item is created), `change` lets others still add rows that
 * refer to it (FOR NO KEY UPDATE), `delete` does not (FOR UPDATE).
 */
export type LockStrength = 'keep' | 'change' | 'delete'

/** A list page: its rows (one more than the page when another follows) and the matching rows' count, undefined past the limit. */
export interface ListResult {
  rows: Row[]
  total: number | undefined
}

/** What a one-statement write records (its event's type and collection, who made the change), and how long it may take. */
export interface EventOf {
  type: string
  collection: string
  actorId: string | null
  /** When the request's time runs out (epoch ms): the statement fails rather than commit later. */
  deadline: number
}

/**
 * Conditions a one-statement write adds to the item's scope, so that it writes only when the
 * checks made without the row hold for the row (src/resources/one-statement.ts).
 */
export interface Guards {
  /** The owner column and the id it must hold: the caller owns the item. */
  owner?: readonly [column: string, id: string]
  /** The `updated_at` values, to the millisecond, one of which the row must have: the versions an If-Match names. */
  versions?: readonly Date[]
}

export interface Store {
  /** A list page, on the primary or on a replica (`on`); `selected`: only these columns and the sort keys (`fields=`); `extra`: more of each row (`include=`). */
  list(plan: ListPlan, scope: Scope, on?: Statements, selected?: readonly string[], extra?: Extra, caller?: unknown): Promise<ListResult>
  /** The groups of the rows in `scope` the query's filters match, with its metrics, sorted by their keys: at most `limit`. */
  aggregate(query: AggregateQuery, scope: Scope, limit: number, on?: Statements, caller?: unknown): Promise<Row[]>
  /**
   * A page of an export: the rows the plan matches in `scope`, in its order, after the row whose
   * sort keys are `last` (none: the first page), at most `limit`; `selected`: only these columns
   * and the sort keys (`fields=`).
   */
  exportPage(plan: ListPlan, scope: Scope, last: readonly unknown[] | undefined, limit: number, on: Statements, selected: readonly string[] | undefined, caller: unknown): Promise<Row[]>
  /** How many rows the plan matches in `scope`, counted to `limit + 1` at most. */
  countUpTo(plan: ListPlan, scope: Scope, limit: number, on: Statements, caller: unknown): Promise<number>
  /** The row in `scope`, on the pool or in a transaction; `selected`: only these columns (`fields=`); `extra`: more of it (`include=`). */
  find(scope: Scope, on?: Statements, selected?: readonly string[], extra?: Extra): Promise<Row | null>
  /** Whether the row in `scope` exists; with `lock`, held so until `on`, a transaction, ends. */
  exists(scope: Scope, on?: Statements, lock?: LockStrength): Promise<boolean>
  /** The row, when `tx` changed it (a trigger's doing). */
  findChanged(tx: Statements, scope: Scope): Promise<Row | null>
  /** The row, locked against other writers until `tx` ends. */
  lock(tx: Statements, scope: Scope, strength: LockStrength): Promise<Row | null>
  /** The rows in `scope` the plan's filters match, at most `limit` by their ids, locked until `tx` ends (a change by filter). */
  lockMatching(tx: Statements, plan: ListPlan, scope: Scope, limit: number, strength: LockStrength, caller: unknown): Promise<Row[]>
  insert(tx: Statements, data: Row): Promise<Row>
  /** Inserts the row unless another holds its value of the unique column `unique`: null then. */
  insertUnlessTaken(tx: Statements, data: Row, unique: string): Promise<Row | null>
  /** Sets the changed columns, returning the row as stored. */
  update(tx: Statements, scope: Scope, data: Row): Promise<Row | null>
  /** Deletes the row, returning it as it was; null when there was none. */
  remove(tx: Statements, scope: Scope): Promise<Row | null>
  /** Inserts the row and its event in one statement, committed on its own; and records the item on the request's Idempotency-Key, when it holds one. */
  createRecorded(data: Row, event: EventOf, key: KeyClaim | null): Promise<Row>
  /**
   * Inserts the rows and an event for each, in their order, in one statement committed on its
   * own; every row has the same columns. The rows as stored, in the same order.
   */
  createManyRecorded(rows: readonly Row[], event: EventOf): Promise<Row[]>
  /**
   * Sets `data` and moves `updated_at` past `now` and its last value, with its event, in one
   * statement committed on its own: only when the row is in scope, meets the guards, and differs
   * from `data`. Null when it wrote nothing: no such row, a guard failed, or nothing changed.
   */
  changeRecorded(scope: Scope, guards: Guards, data: Row, now: Date, event: EventOf): Promise<Row | null>
  /** Deletes the row and records its event in one statement, when it is in scope and meets the guards; null when it deleted nothing. */
  removeRecorded(scope: Scope, guards: Guards, event: EventOf): Promise<Row | null>
  /** The id of the item in the trash that holds `value` in the unique column `column`, if one does. */
  trashedHolder(column: string, value: unknown): Promise<string | undefined>
  /** Deletes for good at most `limit` items that have been in the trash longer than `days`, each with its event: how many. */
  purgeTrash(days: number, limit: number, event: EventOf): Promise<number>
}

export interface StoreOptions {
  /** The table behind the model (its `@@map`). */
  table: string
  /** Model fields every read returns (item and list). */
  columns: readonly string[]
  /** Model fields a list page returns. */
  listColumns: readonly string[]
  /** Lists count matching rows up to this many; beyond, the total is unknown unless asked for (COUNT_LIMIT). */
  countLimit: number
  /** The table keeps a trash (`deleted_at`): statements reach the shelf their scope names, the live items by default. */
  trash: boolean
  /** A nested collection's parent that keeps a trash: its table, and the column that holds its id. An item reads as gone while its parent is in the trash. */
  trashedParent?: { table: string; column: string }
}

const nameOf = (text: string) => `rf_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`

/**
 * Statements built at first use, one per shape, prepared under a name made from their text (one
 * name, one text). The shapes of a store are few, but a read's columns follow `fields=`: past
 * MAX_PREPARED shapes, new ones run unprepared, as lists do past theirs.
 */
const MAX_PREPARED = 200
function preparedStatements() {
  const cache = new Map<string, { text: string; name: string | undefined }>()
  return (shape: string, build: () => string) => {
    let statement = cache.get(shape)
    if (!statement) {
      const text = build()
      statement = { text, name: cache.size < MAX_PREPARED ? nameOf(text) : undefined }
      if (statement.name !== undefined) cache.set(shape, statement)
    }
    return statement
  }
}

/**
 * List statements prepared by their text, as long as there are few of them: every combination of
 * filters is a shape, and each prepared statement takes memory on every connection. Past
 * MAX_PREPARED_LISTS shapes, new ones run unprepared (parsed and planned each time).
 */
const MAX_PREPARED_LISTS = 200
function listNames() {
  const names = new Map<string, string>()
  return (text: string) => {
    let name = names.get(text)
    if (name === undefined && names.size < MAX_PREPARED_LISTS) names.set(text, (name = nameOf(text)))
    return name
  }
}

/** A select list of `columns`; `alias` qualifies them (`p."stock"`). */
export const columnList = (columns: readonly string[], alias?: string) => columns.map((column) => `${alias ? `${alias}.` : ''}${quote(column)}`).join(', ')
const conditions = (keys: readonly string[], first: number) => keys.map((key, i) => `${quote(key)} = $${first + i}`).join(' AND ')

const LOCKS: Readonly<Record<LockStrength, string>> = { keep: 'FOR KEY SHARE', change: 'FOR NO KEY UPDATE', delete: 'FOR UPDATE' }

/**
 * The hand-written statements on one row, by its scope (id, and parent when nested). They return
 * rows as the table has them, by column (the model's fields have the same names). The read is
 * three times Prisma's rate on the product read (docs/performance.md).
 */
function rowStatements(table: string, columns: readonly string[], trash: boolean, trashedParent?: StoreOptions['trashedParent']) {
  const list = columnList(columns)
  const prepared = preparedStatements()
  const first = async (on: Statements, text: string, name: string | undefined, values: unknown[]) => (await on.query<Row>(text, values, name))[0] ?? null
  const scoped = (scope: Scope) => Object.keys(scope)
  // The conditions of a scope: its columns', and its shelf's; the shape names both.
  const parentLive = trashedParent
    ? ` AND EXISTS (SELECT FROM ${quote(trashedParent.table)} tp WHERE tp."id" = ${quote(table)}.${quote(trashedParent.column)} AND tp."deleted_at" IS NULL)`
    : ''
  const where = (scope: Scope, first: number) => `${conditions(scoped(scope), first)}${andShelf(trash, scope)}${parentLive}`
  const shapeOf = (scope: Scope) => `${scoped(scope).join(',')}${scope[TRASHED] ?? ''}`
  return {
    /** `selected`: only these columns (`fields=`), else every one; `extra`: more of the select list (`include=`), on the table's row. */
    read(on: Statements, scope: Scope, lock?: LockStrength, changedHere = false, selected?: readonly string[], extra?: Extra) {
      const keys = scoped(scope)
      const values = keys.map((key) => scope[key])
      const more = extra?.(quote(table), (value) => `$${values.push(value)}`) ?? ''
      // The row version this transaction wrote (its trigger's doing) has this transaction's id as xmin.
      const changed = changedHere ? ` AND "xmin" = pg_current_xact_id()::xid` : ''
      const { text, name } = prepared(`read|${shapeOf(scope)}|${lock ?? ''}|${changed}|${selected?.join(',') ?? ''}|${more}`, () =>
        `SELECT ${selected ? columnList(selected) : list}${more} FROM ${quote(table)} WHERE ${where(scope, 1)}${changed}${lock ? ` ${LOCKS[lock]}` : ''}`,
      )
      return first(on, text, name, values)
    },
    /** `unlessTaken`: a unique column; when another row holds the value, nothing is inserted (null). */
    insert(on: Statements, data: Row, unlessTaken?: string) {
      const keys = Object.keys(data)
      const { text, name } = prepared(`insert|${keys.join(',')}|${unlessTaken ?? ''}`, () => {
        const names = keys.map((column) => quote(column)).join(', ')
        const values = keys.map((_, i) => `$${i + 1}`).join(', ')
        const skip = unlessTaken ? ` ON CONFLICT (${quote(unlessTaken)}) DO NOTHING` : ''
        return `INSERT INTO ${quote(table)} (${names}) VALUES (${values})${skip} RETURNING ${list}`
      })
      return first(on, text, name, keys.map((key) => data[key]))
    },
    update(on: Statements, scope: Scope, data: Row) {
      const sets = Object.keys(data)
      const keys = scoped(scope)
      const { text, name } = prepared(`update|${sets.join(',')}|${shapeOf(scope)}`, () => {
        const assignments = sets.map((column, i) => `${quote(column)} = $${i + 1}`).join(', ')
        return `UPDATE ${quote(table)} SET ${assignments} WHERE ${where(scope, sets.length + 1)} RETURNING ${list}`
      })
      return first(on, text, name, [...sets.map((column) => data[column]), ...keys.map((key) => scope[key])])
    },
    remove(on: Statements, scope: Scope) {
      const keys = scoped(scope)
      const { text, name } = prepared(`delete|${shapeOf(scope)}`, () => `DELETE FROM ${quote(table)} WHERE ${where(scope, 1)} RETURNING ${list}`)
      return first(on, text, name, keys.map((key) => scope[key]))
    },
  }
}

/**
 * A change and its event in one statement: the change in a CTE `w` that returns the row by its
 * columns' names, the event made from it, and the row as the store's rows are. One round trip,
 * prepared, committed on its own (docs/performance.md, "Writes at the floor").
 */
function recordedStatements(db: Database, table: string, columns: readonly string[], trash: boolean) {
  const returning = columns.map((column) => quote(column)).join(', ')
  const row = columnList(columns, 'w')
  const prepared = preparedStatements()
  /** `actor` is the number of the actor's parameter; the remaining time's follows it, and a key's caller and key follow that. */
  const recorded = (change: string, event: EventOf, actor: number, keyed = false) =>
    `WITH w AS (${change} RETURNING ${returning}), e AS (${eventsOf('w', event, actor, actor + 1)})${keyed ? `, k AS (${recordItemOf('w', actor + 2)})` : ''} SELECT ${row} FROM w`
  /** Guards after the scope's conditions, from parameter `$first`. */
  const guarded = (guards: Guards, first: number) => {
    const conditions: string[] = []
    const values: unknown[] = []
    if (guards.owner) {
      values.push(guards.owner[1])
      conditions.push(`${quote(guards.owner[0])} = $${first + values.length - 1}`)
    }
    if (guards.versions) {
      values.push(guards.versions)
      conditions.push(`date_trunc('milliseconds', "updated_at") = ANY($${first + values.length - 1}::timestamptz[])`)
    }
    return { sql: conditions.map((c) => ` AND ${c}`).join(''), shape: `${guards.owner?.[0] ?? ''}|${guards.versions ? 'v' : ''}`, values }
  }
  const one = async (text: string, name: string | undefined, values: unknown[]) => (await db.query<Row>(text, values, name))[0] ?? null
  return {
    /**
     * The rows go as one JSON parameter, read as the table's row type (json_populate_recordset):
     * one statement whatever their number, prepared once per set of columns.
     */
    createMany(data: readonly Row[], event: EventOf) {
      const keys = Object.keys(data[0]!)
      const { text, name } = prepared(`createMany|${keys.join(',')}|${event.type}`, () => {
        const names = keys.map((column) => quote(column)).join(', ')
        const insert = `INSERT INTO ${quote(table)} (${names}) SELECT ${names} FROM json_populate_recordset(NULL::${quote(table)}, $1::json) ORDER BY "id"`
        // The events in the items' order: their ids (UUIDv7) are.
        return `WITH w AS (${insert} RETURNING ${returning}), e AS (${eventsOf('w', event, 2, 3)} ORDER BY w.id) SELECT ${row} FROM w ORDER BY w.id`
      })
      return db.query<Row>(text, [JSON.stringify(data), event.actorId, timeLeft(event.deadline)], name)
    },
    create(data: Row, event: EventOf, key: KeyClaim | null) {
      const keys = Object.keys(data)
      const { text, name } = prepared(`create|${keys.join(',')}|${event.type}|${key ? 'k' : ''}`, () => {
        const names = keys.map((column) => quote(column)).join(', ')
        const values = keys.map((_, i) => `$${i + 1}`).join(', ')
        return recorded(`INSERT INTO ${quote(table)} (${names}) VALUES (${values})`, event, keys.length + 1, key !== null)
      })
      const claimed = key ? [key.caller, key.key] : []
      return one(text, name, [...keys.map((key) => data[key]), event.actorId, timeLeft(event.deadline), ...claimed]) as Promise<Row>
    },
    change(scope: Scope, guards: Guards, data: Row, now: Date, event: EventOf) {
      const sets = Object.keys(data)
      const keys = Object.keys(scope)
      const guard = guarded(guards, sets.length + keys.length + 2)
      const actor = sets.length + keys.length + guard.values.length + 2
      const { text, name } = prepared(`change|${sets.join(',')}|${keys.join(',')}${scope[TRASHED] ?? ''}|${guard.shape}|${event.type}`, () => {
        const assignments = sets.map((column, i) => `${quote(column)} = $${i + 1}`)
        // As the row's current version does: updated_at moves forward on every change, even two within one millisecond.
        const moved = `"updated_at" = greatest($${sets.length + 1}::timestamptz, date_trunc('milliseconds', "updated_at") + interval '1 millisecond')`
        const differs = `ROW(${sets.map((column) => quote(column)).join(', ')}) IS DISTINCT FROM ROW(${sets.map((_, i) => `$${i + 1}`).join(', ')})`
        return recorded(
          `UPDATE ${quote(table)} SET ${[...assignments, moved].join(', ')} WHERE ${conditions(keys, sets.length + 2)}${andShelf(trash, scope)}${guard.sql} AND ${differs}`,
          event,
          actor,
        )
      })
      return one(text, name, [...sets.map((column) => data[column]), now, ...keys.map((key) => scope[key]), ...guard.values, event.actorId, timeLeft(event.deadline)])
    },
    remove(scope: Scope, guards: Guards, event: EventOf) {
      const keys = Object.keys(scope)
      const guard = guarded(guards, keys.length + 1)
      const actor = keys.length + guard.values.length + 1
      const { text, name } = prepared(`remove|${keys.join(',')}${scope[TRASHED] ?? ''}|${guard.shape}|${event.type}`, () =>
        recorded(`DELETE FROM ${quote(table)} WHERE ${conditions(keys, 1)}${andShelf(trash, scope)}${guard.sql}`, event, actor),
      )
      return one(text, name, [...keys.map((key) => scope[key]), ...guard.values, event.actorId, timeLeft(event.deadline)])
    },
  }
}

export function createStore(db: Database, options: StoreOptions): Store {
  const { countLimit, trash, table } = options
  // An item in the trash shows when it went there: every read returns deleted_at.
  const shown = (columns: readonly string[]) => (trash ? [...columns, 'deleted_at'] : columns)
  const columns = shown(options.columns)
  const rows = rowStatements(table, columns, trash, options.trashedParent)
  const recorded = recordedStatements(db, table, columns, trash)
  const ids = rowStatements(table, ['id'], trash, options.trashedParent)
  // The sort keys are read too (a cursor is made from them): every sortable field is a list column.
  const target = { table: quote(table), keptCount: keptCountOf(table), select: columnList(shown(options.listColumns), 'r'), trash }
  const listName = listNames()
  const purge = purgeStatement(table, columns)
  return {
    async list(plan, scope, on = db, selected, extra, caller) {
      // A cursor is made from the last row's sort keys: they are read whatever the fields.
      const sortKeys = plan.sort.filter((key) => key.field !== RELEVANCE).map((key) => key.field.name)
      const chosen = selected && { ...target, select: columnList(shown([...new Set([...selected, ...sortKeys])]), 'r') }
      const { text, values } = listStatement(chosen ?? target, plan, scope, countLimit, extra, caller)
      const found = await on.query<Row>(text, values, listName(text))
      // BIGINT arrives as a string; a count is a safe integer.
      const count = Number(found[0]![TOTAL])
      const total = plan.count === 'exact' || found[0]![COMPLETE] === true || count <= countLimit ? count : undefined
      // An empty page is one row of nulls, there to carry the count.
      return { rows: found[0]!.id === null ? [] : found, total }
    },
    aggregate(query, scope, limit, on = db, caller) {
      const { text, values } = aggregateStatement(target, query, scope, limit, caller)
      return on.query<Row>(text, values, listName(text))
    },
    exportPage(plan, scope, last, limit, on, selected, caller) {
      const sortKeys = plan.sort.filter((key) => key.field !== RELEVANCE).map((key) => key.field.name)
      const columns = shown(selected ? [...new Set([...selected, ...sortKeys])] : options.listColumns)
      const { text, values } = exportPageStatement(target, columnList(columns), plan, scope, last, limit, caller)
      return on.query<Row>(text, values, listName(text))
    },
    async countUpTo(plan, scope, limit, on, caller) {
      const { text, values } = boundedCountStatement(target, plan, scope, limit, caller)
      // BIGINT arrives as a string.
      return Number((await on.query<{ n: unknown }>(text, values, listName(text)))[0]!.n)
    },
    find: (scope, on = db, selected, extra) => rows.read(on, scope, undefined, false, selected && shown(selected), extra),
    exists: async (scope, on = db, lock) => (await ids.read(on, scope, lock)) !== null,
    findChanged: (tx, scope) => rows.read(tx, scope, undefined, true),
    lock: (tx, scope, strength) => rows.read(tx, scope, strength),
    lockMatching(tx, plan, scope, limit, strength, caller) {
      const { text, values } = matchingStatement(target, columnList(columns), plan, scope, limit, LOCKS[strength], caller)
      return tx.query<Row>(text, values)
    },
    insert: async (tx, data) => (await rows.insert(tx, data))!,
    insertUnlessTaken: (tx, data, unique) => rows.insert(tx, data, unique),
    update: (tx, scope, data) => rows.update(tx, scope, data),
    remove: (tx, scope) => rows.remove(tx, scope),
    createRecorded: recorded.create,
    createManyRecorded: recorded.createMany,
    changeRecorded: recorded.change,
    removeRecorded: recorded.remove,
    async trashedHolder(column, value) {
      const found = await db.query<{ id: string }>(`SELECT "id" FROM ${quote(table)} WHERE ${quote(column)} = $1 AND "deleted_at" IS NOT NULL`, [value])
      return found[0]?.id
    },
    async purgeTrash(days, limit, event) {
      const found = await db.query<{ n: string }>(purge(event, limit), [days, event.actorId, timeLeft(event.deadline)])
      return Number(found[0]!.n)
    },
  }
}

/**
 * What housekeeping purges: the items longer than `$1` days in the trash, oldest first, at most
 * `limit` in one statement (a bounded transaction), each with its `deleted` event. An item
 * another transaction holds is skipped, to be purged at the next round.
 */
function purgeStatement(table: string, columns: readonly string[]) {
  const returning = columns.map((column) => quote(column)).join(', ')
  return (event: EventOf, limit: number) => {
    const expired = `SELECT "id" FROM ${quote(table)} WHERE "deleted_at" < now() - make_interval(days => $1::int) ORDER BY "deleted_at" LIMIT ${limit} FOR UPDATE SKIP LOCKED`
    return `WITH w AS (DELETE FROM ${quote(table)} WHERE "id" IN (${expired}) RETURNING ${returning}), e AS (${eventsOf('w', event, 2, 3)}) SELECT count(*) AS n FROM w`
  }
}

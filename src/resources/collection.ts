/** defineCollection: a collection's declaration, checked and derived once at startup. */
import type { Static, TObject, TSchema } from 'typebox'
import type { CollectionAccess, FieldAccess } from '../auth/access.js'
import type { Caller } from '../auth/caller.js'
import type { Statements } from '../db/client.js'
import { createBodySchema, patchBodySchema, replaceBodySchema } from './derive-schemas.js'
import { deriveFields, type Field } from './fields.js'
import type { ListSpec } from './list-query/plan.js'
import { aggregateSpec, type AggregateSpec, type AggregatesOptions } from './aggregates/spec.js'
import type { ComputedField, Representation } from './represent.js'
import { columnsOf, type ColumnOf, type ModelName, type RowOf } from '../db/models.js'

/** Values by JSON field name, as a write will store them. */
export type WriteData = Record<string, unknown>

/** How a version shows one field: its schema there, and the conversions to and from the stored view. */
export interface FieldView {
  /** The field's schema in this version, for responses and request bodies. */
  schema: TSchema
  /** The field's value as the collection represents it → as this version shows it. */
  read(value: unknown): unknown
  /** A value valid against `schema` → the collection's value. */
  write(value: unknown): unknown
}

/** The fields one version shows differently, by JSON name. */
export type VersionView = Readonly<Record<string, FieldView>>

/**
 * What happened to an item (`status_changed`: a state machine's move; `trashed` and `restored`:
 * into the trash and out of it); the event's type is `<collection>.<action>`.
 */
export type EventAction = 'created' | 'updated' | 'deleted' | 'trashed' | 'restored' | `${string}_changed`

/** The name events give a collection: its table's, so that nested ones stay unambiguous (`order_items`). */
export const eventCollection = (collection: Collection): string => collection.options.table ?? collection.name

/** The most days a collection may keep its history: a hundred years. */
export const MAX_HISTORY_DAYS = 36_500

/** Whether an item's history can be told: every change of the collection's items is an event. */
export const hasHistory = (collection: Collection): boolean => collection.options.changedWithoutEvents !== true

/** The collections that keep their history longer than the feed, by their events' name: their days. */
export const historyKept = (collections: readonly Collection[]): ReadonlyMap<string, number> =>
  new Map(collections.filter((c) => c.options.history).map((c) => [eventCollection(c), c.options.history!.days]))

/** Who may make a move: the item's owner, an admin. */
export type Mover = 'owner' | 'admin'

/** What a guard or an effect sees; it writes only through `tx`. */
export interface TransitionContext {
  tx: Statements
  /** The item before the move, every field. */
  item: Representation
  from: string
  to: string
  caller: Caller | null
  /** Records that the effect changed `row` of `collection` (an event in the same transaction). */
  changed<N extends ModelName>(collection: Collection<N>, row: NoInfer<RowOf<N>>): void
}

export interface Transition {
  by: readonly Mover[]
  /** Throws an ApiError (409 STATE_CONFLICT) when the move cannot be made now; nothing is written. */
  guard?(context: TransitionContext): Promise<void>
  /** Runs after the item's change, in its transaction: what the move does elsewhere. */
  effect?(context: TransitionContext): Promise<void>
}

export interface StateMachine {
  /** The field that holds the state: an enum of the item schema. */
  field: string
  initial: string
  /** Per state, the states it may move to; a state with none is final. */
  transitions: Readonly<Record<string, Readonly<Record<string, Transition>>>>
}

/**
 * What a write hook sees: the values about to be stored, and the item as it is now, typed by the
 * collection's schemas (`Create`, `Item`: their JSON, as a client sends and reads it).
 */
export interface WriteContext<Create = WriteData, Item = Representation> {
  operation: 'create' | 'replace' | 'patch'
  /**
   * Values to store, by JSON field name: the body's, and a server field a hook sets (an order
   * item's price); a hook may change or add them.
   */
  data: Partial<Create & Item>
  /** The item's current representation (replace and patch). */
  current?: Item
  /** The parent item's id, in a nested collection. */
  parentId?: string
  /** Who is writing. */
  caller: Caller | null
  /** The write's transaction: a hook's lookups (through functions in src/db/) see and lock what the write will change. */
  tx: Statements
}

/** What a delete hook sees: the item as it is. */
export type DeleteContext<Item = Representation> = Omit<WriteContext<never, Item>, 'operation' | 'data' | 'current'> & { current: Item }

// Methods, not function properties: a collection's typed hooks are then also the untyped ones the
// factory calls with the data it has validated against the same schemas.
export interface CollectionHooks<Create = WriteData, Item = Representation> {
  /** Runs after validation and before the write; throw an ApiError to refuse it. */
  beforeWrite?(context: WriteContext<Create, Item>): void | Promise<void>
  /** Runs before a delete; throw an ApiError to refuse it. */
  beforeDelete?(context: DeleteContext<Item>): void | Promise<void>
}

export interface CollectionOptions<M extends ModelName = ModelName, Create extends TObject = TObject, Item extends TObject = TObject> {
  /** The plural noun in the path: `/api/v1/{name}`. */
  name: string
  /**
   * The Prisma model that stores the items. Its fields are named as its columns, and each stored
   * field of the item schema must be one of them (checked at startup).
   */
  model: M
  /** The model's table (its `@@map`), for the hand-written reads; the collection's name by default. */
  table?: string
  /**
   * One item in words with its article, for the document's summaries ("Create a product"): by
   * default the model's name in words after "a", or "an" before a vowel ("an order item"); name
   * it where that reads wrong ("a user").
   */
  noun?: string
  schemas: {
    /** The body of a POST: the writable fields; `default` marks what an absent field becomes. */
    create: Create
    /** The detail representation: every readable field, server fields and related data included. */
    item: Item
    /** The list representation: a subset of the item's fields. */
    summary: TObject
  }
  sortable?: readonly string[]
  filterable?: readonly string[]
  /**
   * Writable fields each of which a unique index of the table holds alone: an upsert's
   * `on_conflict` may name one (src/resources/create-many.ts).
   */
  unique?: readonly ColumnOf<M>[]
  /**
   * Filterable text fields that `field[contains]=text` may search (case-insensitive substring).
   * Each needs a trigram index (`USING GIN (column gin_trgm_ops)`) in a migration: without one
   * the search reads the whole table.
   */
  searchable?: readonly string[]
  /**
   * Full-text search (`q=`): the text fields whose words it finds, each with its weight in the
   * relevance order (A the highest, D the lowest). Their words are kept in the table's `search`
   * column (a `tsvector` with a GIN index, filled by a trigger with the same weights: see the
   * products' migration).
   */
  textSearch?: Readonly<Record<string, 'A' | 'B' | 'C' | 'D'>>
  /** Fields of the item schema computed from stored columns (which need not be in the schema). */
  computed?: Readonly<Record<string, ComputedField>>
  /**
   * Nests the collection one level below another: `/{parent}/{id}/{name}`; `field` holds the
   * parent's id. `aggregates`: the parent keeps figures of these items (a trigger: an order's
   * total, a product's rating), so a write here changes the parent too and records its event.
   */
  parent?: { collection: Collection; field: ColumnOf<M>; aggregates?: boolean }
  /**
   * Items of other collections this one's rows point at, by relation name: `include=<name>` embeds
   * them (src/resources/relations.ts). `field` holds the other item's id; `collection` names a
   * top-level collection the service serves. A parent and child collections are relations
   * without being declared.
   */
  references?: Readonly<Record<string, { field: ColumnOf<M>; collection: string }>>
  /**
   * The service changes the items itself, without an event (a webhook's delivery log, a webhook
   * its worker disables): a list of them, or of what embeds them, is always read to be
   * revalidated (src/resources/revalidation.ts).
   */
  changedWithoutEvents?: boolean
  /** A state machine on one field (src/resources/states.ts): moves checked, guarded and carried out on PUT and PATCH. */
  states?: StateMachine
  /**
   * The field that holds the item's owner, set from the caller on create and never from the body;
   * `id` for items that are their own owner (users). A nested collection without one is owned
   * by its parent's owner.
   */
  owner?: ColumnOf<M>
  access: CollectionAccess
  /** Fields that only some callers may read (omitted for the others) or write (403 for the others). */
  fieldAccess?: Readonly<Record<string, FieldAccess>>
  /** Fields of the create schema that no representation shows, stored transformed (a password, as its hash). */
  writeOnly?: Readonly<Record<string, WriteOnlyField<ColumnOf<M>>>>
  hooks?: CollectionHooks<Static<Create>, Static<Item>>
  /** Anonymous reads may be cached by anyone for this many seconds (`public, max-age`); else `no-store`. */
  cacheMaxAge?: number
  /** Changes (PUT, PATCH, DELETE) must carry If-Match; without it they are refused with 428. */
  requireIfMatch?: boolean
  /** Fields that an API version shows differently, by version number (src/resources/versions.ts). */
  versions?: Readonly<Record<number, VersionView>>
  /** `false`: clients only read here (a log the service keeps); the other methods are 405. */
  writes?: false
  /**
   * DELETE moves an item to the trash, where it stays this many days before housekeeping deletes
   * it for good (src/resources/trash.ts). The table needs a `deleted_at` column (timestamptz,
   * null while live); a top-level collection only: a nested item goes with its parent.
   */
  trash?: { days: number }
  /**
   * An item's history (`GET .../{id}/history`) reaches back `days`, longer than the change feed
   * keeps events (EVENTS_RETENTION_DAYS): pruning moves the collection's older events to the
   * history's own table, where the feed never reads (src/db/events.ts). Without it, an item's
   * history reaches as far back as the feed. A collection the service changes without events
   * (`changedWithoutEvents`) has no history.
   */
  history?: { days: number }
  /**
   * `GET /{collection}/aggregates`: what its answers may be grouped by and compute
   * (src/resources/aggregates/spec.ts); without it, the collection has no such route.
   */
  aggregates?: AggregatesOptions
}

export interface WriteOnlyField<Column extends string = string> {
  /** The column that stores it. */
  column: Column
  /** The stored value for a written one. */
  store(value: unknown): unknown
  /** The value a create that leaves the field out gets (a generated secret). */
  generate?(): string
  /** The create's response shows the value, that once: a secret the client must keep. */
  shownOnCreate?: boolean
}

/** A collection as the routes serve it; `M`, its model, types the rows its effects report (`changed`). */
export interface Collection<M extends ModelName = ModelName> {
  readonly options: CollectionOptions
  /** The model that stores the items. */
  readonly model: M
  readonly name: string
  readonly fields: readonly Field[]
  readonly field: ReadonlyMap<string, Field>
  readonly summaryFields: readonly Field[]
  readonly readOnly: readonly string[]
  readonly writeOnly: readonly string[]
  /** Write-only fields the create's response shows, that once. */
  readonly shownOnCreate: readonly string[]
  /** Whose items these are: an owner field of their own, their parent's owner, or nobody's. */
  readonly ownership: { readonly kind: 'own'; readonly column: string } | { readonly kind: 'parent'; readonly column: string } | { readonly kind: 'none' }
  /** Read-only fields a PUT may echo but never change: the id, the creation time, the parent, the owner. */
  readonly identity: readonly string[]
  /** Model fields an item read selects: its columns and what its computed fields read. */
  readonly columns: readonly string[]
  /** Model fields a list read selects: the summary's, the owner, the sort keys. */
  readonly listColumns: readonly string[]
  readonly listSpec: ListSpec
  /** What its aggregates may group by and compute; undefined when it declares none. */
  readonly aggregates: AggregateSpec | undefined
  readonly bodies: {
    readonly create: object
    readonly replace: object
    readonly patch: object
  }
}

function pick(fields: ReadonlyMap<string, Field>, names: readonly string[], what: string, collection: string): Map<string, Field> {
  return new Map(
    names.map((name) => {
      const field = fields.get(name)
      if (!field) throw new TypeError(`collection ${collection}: ${what} field "${name}" is not in the item schema`)
      return [name, field]
    }),
  )
}

/**
 * Every stored field, every column a computed field reads and every write-only field's column is
 * a column of the model: a field named unlike its column fails here, not at its first query. A
 * model the generated client does not know (only reachable through a cast) is not checked.
 */
function checkColumns(options: CollectionOptions, fields: readonly Field[]): void {
  const columns = columnsOf(options.model)
  if (columns.size === 0) return
  const stored = [
    ...fields.filter((f) => !f.computed).map((f) => f.name),
    ...Object.values(options.computed ?? {}).flatMap((c) => c.from),
    ...Object.values(options.writeOnly ?? {}).map((w) => w.column),
  ]
  for (const column of stored) {
    if (!columns.has(column)) throw new TypeError(`collection ${options.name}: "${column}" is not a field of the Prisma model ${options.model} (prisma/schema.prisma)`)
  }
}

/** A trash keeps its items in the table, marked by `deleted_at`, which is no field of theirs. */
function checkTrash(options: CollectionOptions, trash: { days: number }, fields: ReadonlyMap<string, Field>): void {
  const { name, model } = options
  if (options.parent) throw new TypeError(`collection ${name}: a nested collection keeps no trash of its own; its items go with their parent`)
  if (!Number.isInteger(trash.days) || trash.days < 1) throw new TypeError(`collection ${name}: trash days must be a whole number, at least 1`)
  if (fields.has('deleted_at')) throw new TypeError(`collection ${name}: deleted_at is the trash's column, not a field of the item schema`)
  const columns = columnsOf(model)
  if (columns.size > 0 && !columns.has('deleted_at')) throw new TypeError(`collection ${name}: a trash needs a deleted_at column in the Prisma model ${model}`)
}

/** Checks the declaration once, at startup: every state is one the field can hold. */
export function checkStateMachine(name: string, machine: StateMachine, states: readonly unknown[] | undefined): void {
  const known = new Set(states)
  const named = [machine.initial, ...Object.keys(machine.transitions), ...Object.values(machine.transitions).flatMap((to) => Object.keys(to))]
  for (const state of named) {
    if (!known.has(state)) throw new TypeError(`collection ${name}: state "${state}" is not a value of ${machine.field}`)
  }
}

/** Checks the declaration and derives everything the routes need, so that no request derives anything. */
export function defineCollection<M extends ModelName, Create extends TObject, Item extends TObject>(
  declared: CollectionOptions<M, Create, Item>,
): Collection<M> {
  // The typed declaration, checked; from here on the factory works with JSON values by name.
  const options = declared as unknown as CollectionOptions
  const { name, schemas } = options
  const computed = options.computed ?? {}
  const fields = deriveFields(schemas.item, schemas.create, Object.keys(computed))
  const field = new Map(fields.map((f) => [f.name, f]))
  const id = field.get('id')
  if (!id) throw new TypeError(`collection ${name}: the item schema needs an id`)
  const summaryNames = Object.keys((schemas.summary as unknown as { properties: object }).properties)
  const readOnly = fields.filter((f) => f.readOnly).map((f) => f.name)
  const writeOnly = Object.keys(options.writeOnly ?? {})
  for (const input of Object.keys((schemas.create as unknown as { properties: object }).properties)) {
    if (!field.has(input) && !writeOnly.includes(input)) throw new TypeError(`collection ${name}: create field "${input}" is not in the item schema`)
  }
  if (options.noun !== undefined && !/^an? \S/.test(options.noun)) throw new TypeError(`collection ${name}: noun "${options.noun}" must start with its article, "a" or "an"`)
  if (options.owner) pick(field, [options.owner], 'owner', name)
  for (const ruled of Object.keys(options.fieldAccess ?? {})) {
    if (!field.has(ruled) && !writeOnly.includes(ruled)) throw new TypeError(`collection ${name}: field rules for "${ruled}", which is not a field`)
  }
  const parentOwner = options.parent?.collection.options.owner
  const ownerRules = [...Object.values(options.access), ...Object.values(options.fieldAccess ?? {}).flatMap((f) => [f.read, f.write])]
  // Without an owner an owner rule would let no one but admins in, or, on a list, filter nothing.
  if (!options.owner && !parentOwner && ownerRules.includes('owner-or-admin')) {
    throw new TypeError(`collection ${name}: an owner-or-admin rule needs an owner field, here or on the parent`)
  }
  if (options.parent) pick(field, [options.parent.field], 'parent', name)
  for (const [unique, declared] of pick(field, options.unique ?? [], 'unique', name)) {
    // An upsert finds the item by a value its body gives.
    if (declared.readOnly) throw new TypeError(`collection ${name}: unique field "${unique}" must be writable`)
  }
  pick(field, Object.values(options.references ?? {}).map((reference) => reference.field), 'reference', name)
  checkColumns(options, fields)
  if (options.trash) checkTrash(options, options.trash, field)
  if (options.states) {
    const state = pick(field, [options.states.field], 'state', name).get(options.states.field)!
    checkStateMachine(name, options.states, state.values)
    // A transition's event carries `from` and `to` beside the item's fields.
    if (field.has('from') || field.has('to')) throw new TypeError(`collection ${name}: a collection with states has no fields named from or to`)
  }
  if (options.history) {
    const { days } = options.history
    if (!Number.isInteger(days) || days < 1 || days > MAX_HISTORY_DAYS) throw new TypeError(`collection ${name}: history days must be a whole number from 1 to ${MAX_HISTORY_DAYS}`)
    // Its changes without events would be missing from it.
    if (options.changedWithoutEvents) throw new TypeError(`collection ${name}: a collection changed without events keeps no history`)
  }
  const summaryFields = [...pick(field, summaryNames, 'summary', name).values()]
  const columnsOf = (chosen: readonly Field[]) => [
    ...new Set(chosen.flatMap((f) => (f.computed ? computed[f.name]!.from : [f.name]))),
  ]
  const sortable = pick(field, options.sortable ?? [], 'sortable', name)
  const filterable = pick(field, options.filterable ?? [], 'filterable', name)
  for (const [searched, weight] of Object.entries(options.textSearch ?? {})) {
    // What a search finds tells what the field holds: only a field everyone who lists may read.
    if (options.fieldAccess?.[searched]?.read) throw new TypeError(`collection ${name}: text search field "${searched}" has a read rule; a search would reveal it`)
    const kind = field.get(searched)?.kind
    if (kind !== 'string' && kind !== 'string[]') throw new TypeError(`collection ${name}: text search field "${searched}" must be a text field or a list of them`)
    if (!['A', 'B', 'C', 'D'].includes(weight)) throw new TypeError(`collection ${name}: text search weight "${weight}" must be A, B, C or D`)
  }
  for (const searched of options.searchable ?? []) {
    if (filterable.get(searched)?.kind !== 'string') throw new TypeError(`collection ${name}: searchable field "${searched}" must be a filterable text field`)
  }
  return {
    options,
    model: declared.model,
    name,
    fields,
    field,
    summaryFields,
    readOnly,
    writeOnly,
    shownOnCreate: writeOnly.filter((f) => options.writeOnly![f]!.shownOnCreate),
    ownership: options.owner
      ? { kind: 'own', column: options.owner }
      : parentOwner
        ? { kind: 'parent', column: parentOwner }
        : { kind: 'none' },
    identity: [...new Set(['id', 'created_at', options.parent?.field, options.owner])].filter((f): f is string => f !== undefined && field.has(f)),
    columns: columnsOf(fields),
    // A list shows each item as its caller's standing towards it allows: the owner is read too;
    // and a cursor holds the sort keys of its row: every sortable field is read.
    listColumns: [...new Set([...columnsOf(summaryFields), ...(options.owner ? [options.owner] : []), ...columnsOf([...sortable.values()])])],
    listSpec: {
      sortable,
      filterable,
      searchable: new Set(options.searchable),
      textSearch: options.textSearch,
      trash: options.trash !== undefined,
      id,
    },
    aggregates: options.aggregates && aggregateSpec(name, options.aggregates, field),
    bodies: {
      create: createBodySchema(schemas.create),
      replace: replaceBodySchema(schemas.create, schemas.item, readOnly, writeOnly),
      patch: patchBodySchema(schemas.create),
    },
  }
}

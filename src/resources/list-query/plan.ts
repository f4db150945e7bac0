/** The typed plan a list request is parsed into; translated to SQL by to-sql.ts. */
import type { Field } from '../fields.js'

/** Items per page when `size` is absent. */
export const DEFAULT_PAGE_SIZE = 20
/** Largest `size`; more is a 400, never silently clamped (it would move every page boundary). */
export const MAX_PAGE_SIZE = 100
/** Largest offset (`(page - 1) * size`) a query may reach: the range of a PostgreSQL integer. */
export const MAX_OFFSET = 2_147_483_647

export type Direction = 'asc' | 'desc'
export type Comparison = 'gt' | 'gte' | 'lt' | 'lte'

export interface SortKey {
  field: Field
  direction: Direction
}

export type FilterValue = string | number | boolean | Date

export type Filter =
  /** `field=a` or `field=a&field=b` or `field[in]=a,b`: equal to any of the values (array fields: contain any). */
  | { kind: 'anyOf'; field: Field; values: FilterValue[] }
  | { kind: 'not'; field: Field; value: FilterValue }
  | { kind: 'compare'; field: Field; op: Comparison; value: FilterValue }
  /** Case-insensitive substring match. */
  | { kind: 'contains'; field: Field; value: string }
  | { kind: 'null'; field: Field; isNull: boolean }
  /** `filter=`: every one of them (AND), any of them (OR), not this one (NOT). */
  | { kind: 'all'; filters: Filter[] }
  | { kind: 'any'; filters: Filter[] }
  | { kind: 'negate'; filter: Filter }
  /** `author.name = "Ada"`: a related item (or, for a list of them, any one) that the caller may read matches. */
  | { kind: 'related'; relation: RelatedSpec; filter: Filter }

/** Where a keyset page starts: after (or, backward, before) a row with these sort-key values. */
export interface CursorPosition {
  values: FilterValue[]
  backward: boolean
}

export interface ListPlan {
  page: number
  size: number
  /** Keyset paging (`cursor`): null for the first page, else the position to read from. */
  cursor: { position: CursorPosition | null } | undefined
  /** The requested keys, then `id`, so that the order is total and pages never overlap. */
  sort: SortKey[]
  filters: Filter[]
  /** `q=`: the words to search for (websearch syntax), when given. */
  search?: string
  /**
   * `bounded`: the rows are counted up to COUNT_LIMIT, beyond which the total is unknown;
   * `exact` (Prefer: count=exact): all of them, whatever it costs.
   */
  count: 'bounded' | 'exact'
}

/** What a collection lets a list request sort and filter by; built once per collection. */
export interface ListSpec {
  sortable: ReadonlyMap<string, Field>
  filterable: ReadonlyMap<string, Field>
  /** Filterable text fields `[contains]` may search. */
  searchable: ReadonlySet<string>
  /** The fields `q=` searches, with their weights; none without full-text search. */
  textSearch: Readonly<Record<string, string>> | undefined
  /** The collection keeps a trash: a list takes `trashed=only|include` (admins). */
  trash: boolean
  id: Field
  /** What `filter=` may reach through a relation (`author.name`), by relation name; added at registration. */
  relations?: ReadonlyMap<string, RelatedSpec>
}

/** Adds a statement parameter and returns its placeholder (`$3`). */
export type AddValue = (value: unknown) => string

/** A relation as `filter=` reaches it: the related rows, their filterable fields, and which of them a caller may read. */
export interface RelatedSpec {
  /** `one`: the row holds the related item's id in `column`; `many`: the related items hold this row's id in `column`. */
  kind: 'one' | 'many'
  column: string
  /** The related table, quoted. */
  table: string
  /** Its fields a filter may compare: filterable there, and readable by every caller who may read the item. */
  filterable: ReadonlyMap<string, Field>
  /** Of those, the text fields `:` may search. */
  searchable: ReadonlySet<string>
  /** Its rows `caller` may read, as a condition on `alias` (true: all, false: none). */
  readable(caller: unknown, alias: string, add: AddValue): boolean | string
}

/** `sort=relevance`: how well an item matches `q`, best first; a sort key, not a field of the items. */
export const RELEVANCE: Field = {
  name: 'relevance',
  kind: 'number',
  nullable: false,
  values: undefined,
  readOnly: true,
  computed: true,
  default: null,
  range: [0, Number.MAX_VALUE],
}

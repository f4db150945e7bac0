/**
 * An export's rows, a keyset page at a time (DESIGN "Data over time"): each page starts after the
 * last row of the one before, by the list's sort keys (the id last, so no row is read twice or
 * skipped), with one index seek; only two pages are held at once, the one being written and the
 * next being read, so memory does not grow with the export.
 */
import type { Statements } from '../../db/client.js'
import type { ListPlan } from '../list-query/plan.js'
import type { Row } from '../represent.js'
import type { Scope, Store } from '../store.js'

/** What an export reads: the list's plan and scope, where, which columns (`fields=`), for whom. */
export interface ExportQuery {
  store: Store
  plan: ListPlan
  scope: Scope
  on: Statements
  selected: readonly string[] | undefined
  caller: unknown
  /** Rows a page reads (EXPORT_PAGE_ROWS). */
  pageRows: number
}

/**
 * The rows, page by page. The next page is read while the one before is written, as long as the
 * client is there (`present`): one that has gone stops the reading, the page under way its last.
 */
export async function* exportPages(query: ExportQuery, first: Row[], present: () => boolean): AsyncGenerator<Row[]> {
  const { store, plan, scope, on, selected, caller, pageRows } = query
  const read = (after: Row) => {
    const page = store.exportPage(plan, scope, plan.sort.map((key) => after[key.field.name]), pageRows, on, selected, caller)
    // Awaited below, unless the client has gone: then its failure is nobody's to hear.
    page.catch(() => {})
    return page
  }
  let rows = first
  while (rows.length > 0 && present()) {
    const next = rows.length === pageRows ? read(rows[rows.length - 1]!) : undefined
    yield rows
    rows = next ? await next : []
  }
}

/** The first page, read before the answer starts: what fails there is answered with an error body, not a cut-off file. */
export const firstPage = ({ store, plan, scope, on, selected, caller, pageRows }: ExportQuery): Promise<Row[]> =>
  store.exportPage(plan, scope, undefined, pageRows, on, selected, caller)

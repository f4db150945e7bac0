/** The RFC 8288 `Link` header of a list page: first, prev, next and last, keeping every other parameter. */
import type { CursorPage } from './cursor.js'
import type { RawQuery } from './parse.js'

// Brackets (filter operators) and commas (lists) stay readable; everything else is percent-encoded.
const encode = (text: string) => encodeURIComponent(text).replace(/%5B/g, '[').replace(/%5D/g, ']').replace(/%2C/g, ',')

/** The query without `replaced`, re-encoded from the parsed parameters, so every link is well formed. */
function keptParameters(query: RawQuery, replaced: string): string {
  const pairs: string[] = []
  for (const [key, value] of Object.entries(query)) {
    if (key === replaced || value === undefined) continue
    for (const item of [value].flat()) pairs.push(`${encode(key)}=${encode(item)}`)
  }
  return pairs.join('&')
}

/** The start of a link that differs only in `replaced`: `path?<the other parameters>&`. */
export function linkPrefix(path: string, query: RawQuery, replaced: string): string {
  const kept = keptParameters(query, replaced)
  return kept === '' ? `${path}?` : `${path}?${kept}&`
}

/**
 * `path` is the request path; `query` its parsed parameters; only `page` changes between links.
 * `lastPage` is undefined when the total is unknown (past COUNT_LIMIT): then there is no `last`,
 * and `more` (a row was found after this page) says whether there is a `next`.
 */
export function pageLinks(path: string, query: RawQuery, page: number, lastPage: number | undefined, more: boolean): string {
  const prefix = linkPrefix(path, query, 'page')
  const link = (n: number, rel: string) => `<${prefix}page=${n}>; rel="${rel}"`
  const links = [link(1, 'first')]
  if (page > 1) links.push(link(Math.min(page - 1, lastPage ?? page - 1), 'prev'))
  if (lastPage === undefined ? more : page < lastPage) links.push(link(page + 1, 'next'))
  if (lastPage !== undefined) links.push(link(lastPage, 'last'))
  return links.join(', ')
}

/**
 * The links of a keyset page: first (`cursor=`), and prev and next where they exist. There is no
 * `last`: finding it would cost what cursors avoid.
 */
export function cursorLinks(path: string, query: RawQuery, page: CursorPage): string {
  const prefix = linkPrefix(path, query, 'cursor')
  const link = (cursor: string, rel: string) => `<${prefix}cursor=${cursor}>; rel="${rel}"`
  const links = [link('', 'first')]
  if (page.prev) links.push(link(page.prev, 'prev'))
  if (page.next) links.push(link(page.next, 'next'))
  return links.join(', ')
}

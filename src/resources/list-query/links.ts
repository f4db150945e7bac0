/** The RFC 8288 `Link` header of a list page: first, prev, next and last, keeping every other parameter. */

/**
 * `path` is the request path; `search` its raw query string (without `?`). The other parameters are
 * kept byte for byte as the client sent them; only `page` is replaced.
 */
export function pageLinks(path: string, search: string, page: number, lastPage: number): string {
  const kept = search === '' ? [] : search.split('&').filter((pair) => pair !== '' && !/^page(=|$)/.test(pair))
  const prefix = kept.length === 0 ? `${path}?` : `${path}?${kept.join('&')}&`
  const link = (n: number, rel: string) => `<${prefix}page=${n}>; rel="${rel}"`
  const links = [link(1, 'first')]
  if (page > 1) links.push(link(Math.min(page - 1, lastPage), 'prev'))
  if (page < lastPage) links.push(link(page + 1, 'next'))
  links.push(link(lastPage, 'last'))
  return links.join(', ')
}

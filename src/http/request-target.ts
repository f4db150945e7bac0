/** The parts of a request's target: in origin-form, a path and an optional query (RFC 9112 §3.2.1). */

/** The request's path: its target without the query. */
export function requestPath(request: { url: string }): string {
  const at = request.url.indexOf('?')
  return at === -1 ? request.url : request.url.slice(0, at)
}

/** A target's path and its query; the query is undefined when there is no `?`. */
export function splitTarget(url: string): [path: string, query: string | undefined] {
  const at = url.indexOf('?')
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)]
}

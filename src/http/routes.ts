/** The table of routes and their methods, built from Fastify's onRoute hook; answers 405 and OPTIONS. */
import type { FastifyInstance } from 'fastify'

interface Entry {
  pattern: RegExp
  methods: Set<string>
}

/** Paths of every route with the methods it serves, for `Allow` (RFC 9110 §10.2.1). */
export class RouteTable {
  readonly #entries = new Map<string, Entry>()

  add(url: string, methods: string | string[]): void {
    const entry = this.#entries.get(url) ?? { pattern: patternOf(url), methods: new Set() }
    for (const method of [methods].flat()) entry.methods.add(method)
    this.#entries.set(url, entry)
  }

  /** The `Allow` value for a request path, or undefined when no route has that path. */
  allowFor(path: string): string | undefined {
    for (const entry of this.#entries.values()) {
      // OPTIONS is answered on every known path by one catch-all route.
      if (entry.pattern.test(path)) return [...entry.methods, 'OPTIONS'].sort().join(', ')
    }
    return undefined
  }

  /** Records every route registered from now on. */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route) => {
      if (route.url !== '*' && route.url !== '/*') this.add(route.url, route.method)
    })
  }
}

function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${source}$`)
}

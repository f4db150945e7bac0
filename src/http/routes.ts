/** The table of routes and their methods, built from Fastify's onRoute hook; answers 405 and OPTIONS. */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route only refuses its methods with 405 (refuseMethods): they are not the path's, so
     * `Allow` does not list them.
     */
    refusal?: boolean
  }
}

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
      if (route.url !== '*' && route.url !== '/*' && !route.config?.refusal) this.add(route.url, route.method)
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

/**
 * A handler that answers 405 with `allow`: for a static path beside a parameter's (an item's
 * `/{collection}/aggregates`), whose other methods would otherwise reach the parameter's routes
 * and be taken for an unknown item (RFC 9110 §15.5.6). Register it with `config.refusal`.
 */
export const refuseMethods = (allow: string) => (request: FastifyRequest) => {
  throw new ApiError('METHOD_NOT_ALLOWED', `${request.method} is not allowed here; allowed: ${allow}.`, [], { headers: { allow } })
}

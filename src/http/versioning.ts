/**
 * API versions: `/api/v{n}/...` is canonical; `/api/...` with a vendor media type in Accept is the
 * second way to name a version; unversioned and slash-ended paths redirect; deprecated versions
 * say so in every response (RFC 9745, RFC 8594).
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError, noResource } from '../errors.js'
import { BODY_LIMIT } from './body-parser.js'
import { JSON_MEDIA_TYPE, negotiate, requestedVersion } from './negotiation.js'
import { requestPath, splitTarget } from './request-target.js'
import { appendHeader } from './response-headers.js'
import type { RouteTable } from './routes.js'

export interface ApiVersion {
  version: number
  /** When the version was deprecated; a deprecated version is still served, with warnings. */
  deprecation?: Date
  /** When it stops being served (announced in `Sunset`). */
  sunset?: Date
}

export const versionPrefix = (version: number) => `/api/v${version}`

/** `/api/v2/products/1` → 2. */
const VERSIONED = /^\/api\/v(\d+)(?:\/|$)/
/** `/api/products/1`: an API path without a version. */
const UNVERSIONED = /^\/api\/(?!v\d+(?:[/?]|$))([^?]*)/

export class Versions {
  readonly all: readonly ApiVersion[]
  /** Where unversioned paths lead: the newest version that is not deprecated. */
  readonly current: number
  readonly #known: Set<number>
  /** The deprecated versions' notices, by version. */
  readonly #notices: Map<number, (request: FastifyRequest, reply: FastifyReply) => void>

  constructor(versions: readonly ApiVersion[]) {
    if (versions.length === 0) throw new TypeError('at least one API version is needed')
    this.all = [...versions].sort((a, b) => a.version - b.version)
    this.#known = new Set(this.all.map((v) => v.version))
    const current = this.all.filter((v) => !v.deprecation).at(-1) ?? this.all.at(-1)!
    this.current = current.version
    this.#notices = new Map(this.all.flatMap((version) => (version.deprecation ? [[version.version, this.#notice(version, version.deprecation)] as const] : [])))
  }

  has(version: number): boolean {
    return this.#known.has(version)
  }

  get list(): string {
    return this.all.map((v) => `v${v.version}`).join(', ')
  }

  /**
   * Fastify's `rewriteUrl`: `/api/products` asked for as `application/vnd.resourceful.v1+json`
   * is routed as `/api/v1/products`. Anything else is left as it is.
   */
  rewrite(request: IncomingMessage): string {
    const url = request.url ?? '/'
    const accept = request.headers.accept
    if (accept === undefined || !url.startsWith('/api/') || !UNVERSIONED.test(url)) return url
    const version = requestedVersion(accept)
    if (version === undefined || !this.has(version)) return url
    return `${versionPrefix(version)}${url.slice('/api'.length)}`
  }

  /** The current version's path for an unversioned API path (a preflight asks about those too). */
  canonical(path: string): string | undefined {
    const unversioned = UNVERSIONED.exec(path)
    return unversioned ? `${versionPrefix(this.current)}/${unversioned[1]}` : undefined
  }

  /**
   * Every answer in a deprecated version's paths says so, errors included, whichever hook or
   * handler gives them: Deprecation, Sunset, and the Link to the same resource in the successor.
   * `request.url` is the URL as routed (`/api/...` asked for as a vendor type is rewritten).
   */
  announce(request: FastifyRequest, reply: FastifyReply): void {
    if (this.#notices.size === 0) return
    const version = VERSIONED.exec(request.url)?.[1]
    if (version !== undefined) this.#notices.get(Number(version))?.(request, reply)
  }

  /** What every response of a deprecated version says, computed once. */
  #notice(version: ApiVersion, deprecation: Date): (request: FastifyRequest, reply: FastifyReply) => void {
    const headers: Record<string, string> = { deprecation: `@${Math.floor(deprecation.getTime() / 1000)}` }
    if (version.sunset) headers.sunset = version.sunset.toUTCString()
    const successor = this.all.find((v) => v.version > version.version && !v.deprecation) ?? this.all.at(-1)!
    const from = versionPrefix(version.version).length
    const to = versionPrefix(successor.version)
    return (request, reply) => {
      reply.headers(headers)
      appendHeader(reply, 'link', `<${to}${requestPath(request).slice(from)}>; rel="successor-version"`)
    }
  }

  /**
   * What a request that matched no route gets when its path is nearly an API path: the
   * location to redirect to (302, GET and HEAD only: clients may replay a redirect as GET), or
   * an error that says what to use. Undefined when it is simply not found.
   */
  unrouted(request: FastifyRequest, routes: RouteTable): { location: string } | ApiError | undefined {
    const [path = '/', query] = splitTarget(request.url)
    const readOnly = request.method === 'GET' || request.method === 'HEAD'
    const search = query === undefined ? '' : `?${query}`
    const versioned = VERSIONED.exec(path)
    if (versioned && !this.has(Number(versioned[1]))) {
      return new ApiError('NOT_FOUND', `API version v${versioned[1]} does not exist; the versions served are ${this.list}.`)
    }
    const canonical = this.canonical(path)
    if (!canonical) return undefined
    // A known version asked for by Accept was routed by `rewrite`; one left here does not exist.
    const asked = request.headers.accept === undefined ? undefined : requestedVersion(request.headers.accept)
    if (asked !== undefined) return new ApiError('NOT_ACCEPTABLE', `API version v${asked} does not exist; the versions served are ${this.list}.`)
    return readOnly && routes.allowFor(canonical) ? { location: canonical + search } : undefined
  }
}

/**
 * onRequest, before any route runs: a path ending in a slash names nothing (a route such as
 * `/products/:id` would otherwise take `/products/` with an empty id). GET and HEAD of a known
 * path with a slash added are redirected to it (301); anything else is a 404.
 */
export function installCanonicalPaths(app: FastifyInstance, routes: RouteTable): void {
  app.addHook('onRequest', (request, reply, done) => {
    const [path = '/', query] = splitTarget(request.url)
    if (path.length === 1 || !path.endsWith('/')) return done()
    // A loop, not /\/+$/: that regex is quadratic on a long run of slashes.
    let end = path.length
    while (end > 1 && path[end - 1] === '/') end--
    const canonical = path.slice(0, end)
    if ((request.method === 'GET' || request.method === 'HEAD') && routes.allowFor(canonical)) {
      return void reply.code(301).header('location', canonical + (query === undefined ? '' : `?${query}`)).send()
    }
    done(noResource())
  })
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The media type this response is sent as, negotiated from Accept: JSON, a vendor type, or a route's own (the event stream). */
    responseType: string
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Media types a route answers in besides JSON, when Accept asks for one (the event stream). */
    mediaTypes?: readonly string[]
  }
}

/** onRequest, before the hooks that can refuse a request (rate limits, credentials, CSRF): Versions.announce. */
export function installDeprecationNotices(app: FastifyInstance, versions: Versions): void {
  app.addHook('onRequest', (request, reply, done) => {
    versions.announce(request, reply)
    done()
  })
}

/**
 * Registers the hooks of one version's routes: the response's media type from Accept (406 when
 * none fits) and `Vary: Accept`.
 */
export function installVersion(api: FastifyInstance, version: ApiVersion): void {
  api.addHook('onRequest', (request, reply, done) => {
    appendHeader(reply, 'vary', 'Accept')
    // A body over the limit is a 413 before anything else (the order of checks).
    if (Number(request.headers['content-length']) > BODY_LIMIT) return done()
    const negotiated = negotiate(request.headers.accept, version.version, request.routeOptions.config.mediaTypes)
    if ('refused' in negotiated) return done(new ApiError('NOT_ACCEPTABLE', negotiated.refused))
    request.responseType = negotiated.mediaType
    done()
  })
  // Only successful responses with a body are typed; errors are always application/json.
  api.addHook('preSerialization', (request, reply, payload, done) => {
    if (request.responseType !== JSON_MEDIA_TYPE && reply.statusCode < 400) reply.type(request.responseType)
    done(null, payload)
  })
}

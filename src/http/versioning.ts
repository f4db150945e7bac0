/**
 * API versions: `/api/v{n}/...` is canonical; `/api/...` with a vendor media type in Accept is the
 * second way to name a version; unversioned and slash-ended paths redirect; deprecated versions
 * say so in every response (RFC 9745, RFC 8594).
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../errors.js'
import { noResource } from './error-handler.js'
import { JSON_MEDIA_TYPE, negotiate, VENDOR_TYPE } from './negotiation.js'
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

/** `/api/v2/products/1` → 2 and `/products/1`. */
const VERSIONED = /^\/api\/v(\d+)(\/[^?]*)?/
/** `/api/products/1`: an API path without a version. */
const UNVERSIONED = /^\/api\/(?!v\d+(?:[/?]|$))([^?]*)/

export class Versions {
  readonly all: readonly ApiVersion[]
  /** Where unversioned paths lead: the newest version that is not deprecated. */
  readonly current: number
  readonly #known: Set<number>

  constructor(versions: readonly ApiVersion[]) {
    if (versions.length === 0) throw new TypeError('at least one API version is needed')
    this.all = [...versions].sort((a, b) => a.version - b.version)
    this.#known = new Set(this.all.map((v) => v.version))
    const current = this.all.filter((v) => !v.deprecation).at(-1) ?? this.all.at(-1)!
    this.current = current.version
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
    const named = VENDOR_TYPE.exec(accept)
    if (!named || !this.has(Number(named[1]))) return url
    return `${versionPrefix(Number(named[1]))}${url.slice('/api'.length)}`
  }

  /** Deprecation, Sunset and the successor's Link for a response of a deprecated version. */
  announce(version: ApiVersion, request: FastifyRequest, reply: FastifyReply): void {
    if (!version.deprecation) return
    reply.header('deprecation', `@${Math.floor(version.deprecation.getTime() / 1000)}`)
    if (version.sunset) reply.header('sunset', version.sunset.toUTCString())
    const successor = this.all.find((v) => v.version > version.version && !v.deprecation) ?? this.all.at(-1)!
    const path = request.url.split('?', 1)[0]!.slice(versionPrefix(version.version).length)
    appendHeader(reply, 'link', `<${versionPrefix(successor.version)}${path}>; rel="successor-version"`)
  }

  /**
   * What a request that matched no route gets when its path is nearly an API path: a redirect
   * to the canonical path (GET and HEAD only: clients may replay a redirect as GET), or an error
   * that says what to use. Undefined when it is simply not found.
   */
  unrouted(request: FastifyRequest, routes: RouteTable): { location: string; status: 301 | 302 } | ApiError | undefined {
    const [path = '/', query] = splitQuery(request.url)
    const readOnly = request.method === 'GET' || request.method === 'HEAD'
    const search = query === undefined ? '' : `?${query}`
    const versioned = VERSIONED.exec(path)
    if (versioned && !this.has(Number(versioned[1]))) {
      return new ApiError('NOT_FOUND', `API version v${versioned[1]} does not exist; the versions served are ${this.list}.`)
    }
    const unversioned = UNVERSIONED.exec(path)
    if (!unversioned) return undefined
    const named = request.headers.accept && VENDOR_TYPE.exec(request.headers.accept)
    if (named) return new ApiError('NOT_ACCEPTABLE', `API version v${named[1]} does not exist; the versions served are ${this.list}.`)
    const canonical = `${versionPrefix(this.current)}/${unversioned[1]}`
    return readOnly && routes.allowFor(canonical) ? { location: canonical + search, status: 302 } : undefined
  }
}

/**
 * onRequest, before any route runs: a path ending in a slash names nothing (a route such as
 * `/products/:id` would otherwise take `/products/` with an empty id). GET and HEAD of a known
 * path with a slash added are redirected to it (301); anything else is a 404.
 */
export function installCanonicalPaths(app: FastifyInstance, routes: RouteTable): void {
  app.addHook('onRequest', (request, reply, done) => {
    const [path = '/', query] = splitQuery(request.url)
    if (path.length === 1 || !path.endsWith('/')) return done()
    const canonical = path.replace(/\/+$/, '')
    if ((request.method === 'GET' || request.method === 'HEAD') && routes.allowFor(canonical)) {
      return void reply.code(301).header('location', canonical + (query === undefined ? '' : `?${query}`)).send()
    }
    done(noResource())
  })
}

function splitQuery(url: string): [string, string | undefined] {
  const at = url.indexOf('?')
  return at === -1 ? [url, undefined] : [url.slice(0, at), url.slice(at + 1)]
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON media type this response is sent as (negotiated from Accept). */
    responseType: string
  }
}

/**
 * Registers the hooks of one version's routes: the response's media type from Accept (406 when
 * none fits), `Vary: Accept`, and the deprecation notice of a deprecated version.
 */
export function installVersion(api: FastifyInstance, versions: Versions, version: ApiVersion): void {
  api.addHook('onRequest', (request, reply, done) => {
    appendHeader(reply, 'vary', 'Accept')
    versions.announce(version, request, reply)
    const negotiated = negotiate(request.headers.accept, version.version)
    if ('refused' in negotiated) return done(new ApiError('NOT_ACCEPTABLE', negotiated.refused))
    request.responseType = negotiated.mediaType
    done()
  })
  // Only responses with a body are typed; errors are always application/json.
  api.addHook('preSerialization', (request, reply, payload, done) => {
    if (request.responseType !== JSON_MEDIA_TYPE) reply.type(request.responseType)
    done(null, payload)
  })
}

/**
 * Validators and serializers compiled once per process for each distinct schema: Fastify's own
 * compilers (Ajv, fast-json-stringify) behind a cache keyed by the schema's JSON.
 *
 * Fastify compiles a serializer per route and status, and a validator per route and part, for
 * every app it builds: 220 compilations in this service's app, 112 of them distinct (each API
 * version repeats routes, and error answers share schemas). They were most of building the app
 * (about 0.8 s of CPU; fast-json-stringify alone 0.7 s): paid by every start, and by a test suite
 * that builds hundreds of apps, which now pays it once per process (0.1-0.2 s a later build).
 */
import AjvCompiler from '@fastify/ajv-compiler'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import type { FastifyServerOptions } from 'fastify'

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
type Compile = (route: { schema: unknown }) => unknown
type Factory = (externalSchemas: unknown, options: unknown) => Compile

/**
 * The factory's compilers, pooled by the shared schemas and options they are built with (the same
 * in every app of this service), each remembering what it compiled by the schema's JSON: JSON
 * Schema keywords are plain data, so equal JSON compiles to the same function.
 */
function cached(factory: Factory): Factory {
  const pool = new Map<string, Compile>()
  return (externalSchemas, options) => {
    const poolKey = JSON.stringify([externalSchemas, options])
    let compiler = pool.get(poolKey)
    if (!compiler) {
      const compile = factory(externalSchemas, options)
      const compiled = new Map<string, unknown>()
      compiler = (route) => {
        const key = JSON.stringify(route.schema)
        if (!compiled.has(key)) compiled.set(key, compile(route))
        return compiled.get(key)
      }
      pool.set(poolKey, compiler)
    }
    return compiler
  }
}

/** Fastify's `schemaController.compilersFactory`. */
export const compilersFactory: CompilersFactory = {
  buildValidator: cached(AjvCompiler() as unknown as Factory) as unknown as CompilersFactory['buildValidator'],
  buildSerializer: cached(SerializerSelector() as unknown as Factory) as unknown as CompilersFactory['buildSerializer'],
}

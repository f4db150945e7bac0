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
 * A number per distinct schema JSON, remembered per schema object. Fastify hands the factory a
 * new object of the shared schemas for every route (164 an app, some 30 kB of JSON each), but
 * the schemas in it are the app's own objects: each is written out once, not once per route.
 */
const jsonIds = new Map<string, number>()
const objectIds = new WeakMap<object, number>()
function schemaId(schema: object): number {
  let id = objectIds.get(schema)
  if (id === undefined) {
    const json = JSON.stringify(schema)
    id = jsonIds.get(json) ?? jsonIds.size
    jsonIds.set(json, id)
    objectIds.set(schema, id)
  }
  return id
}

/**
 * The factory's compilers, pooled by the shared schemas and options they are built with (the same
 * in every app of this service), each remembering what it compiled by the schema's JSON: JSON
 * Schema keywords are plain data, so equal JSON compiles to the same function.
 */
function cached(factory: Factory): Factory {
  const pool = new Map<string, Compile>()
  return (externalSchemas, options) => {
    const shared = Object.entries((externalSchemas ?? {}) as Record<string, object>).map(([name, schema]) => `${name}=${schemaId(schema)}`)
    const poolKey = `${JSON.stringify(options)} ${shared.join()}`
    let compiler = pool.get(poolKey)
    if (!compiler) {
      const compile = factory(externalSchemas, options)
      const compiled = new Map<number, unknown>()
      compiler = (route) => {
        // A boolean schema (JSON Schema allows `true`) is compiled as it comes.
        if (typeof route.schema !== 'object' || route.schema === null) return compile(route)
        const key = schemaId(route.schema)
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

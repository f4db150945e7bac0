/** buildApp(config): the Fastify instance with every plugin and collection registered; never listens. */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { collections } from './collections/index.js'
import type { Config } from './config.js'
import { openDatabase, type Database } from './db/client.js'
import { migrate } from './db/migrate.js'
import { BODY_LIMIT, installBodyParser } from './http/body-parser.js'
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './http/error-handler.js'
import { RequestLog } from './http/logging.js'
import { installOptions } from './http/options.js'
import { requestId } from './http/request-id.js'
import { installResponseHeaders } from './http/response-headers.js'
import { RouteTable } from './http/routes.js'
import { AJV_OPTIONS } from './http/validator.js'
import type { Collection } from './resources/collection.js'
import { registerCollection } from './resources/collection-plugin.js'

/** The version every path starts with: `/api/v1`. */
export const API_PREFIX = '/api/v1'

export interface BuildOptions {
  /** An already open database (tests); otherwise the configured one is opened and closed with the app. */
  database?: Database
  logger?: FastifyServerOptions['logger']
  /** The collections to serve; the shop's by default. */
  collections?: readonly Collection[]
}

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
  }
}

function loggerOf(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
  }
}

export async function buildApp(config: Config, options: BuildOptions = {}): Promise<FastifyInstance> {
  const db = options.database ?? (await openDatabase(config.database))
  const migrated = config.migrateOnStart ? await migrate(db) : undefined
  const app = Fastify({
    logger: options.logger ?? loggerOf(config),
    logController: new RequestLog(),
    // On close the listener stops accepting; requests already received are finished, not answered 503.
    return503OnClosing: false,
    genReqId: requestId,
    bodyLimit: BODY_LIMIT,
    clientErrorHandler,
    frameworkErrors,
    ajv: AJV_OPTIONS,
  })
  for (const name of migrated?.modified ?? []) app.log.warn({ migration: name }, 'migration file changed after it was applied')
  app.decorate('db', db)
  if (!options.database) app.addHook('onClose', () => db.close())

  const routes = new RouteTable()
  routes.watch(app)
  installResponseHeaders(app)
  installErrorHandling(app, routes)
  installBodyParser(app)
  installOptions(app, routes)
  await app.register(
    async (api) => {
      for (const collection of options.collections ?? collections) registerCollection(api, collection, db)
    },
    { prefix: API_PREFIX },
  )
  return app
}

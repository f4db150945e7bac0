/**
 * Starts the service: configuration, a database that answers, listen, migrations while /readyz says "starting",
 * and a graceful stop on SIGTERM and SIGINT.
 */
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'
import { operatorMessage } from './db/database-errors.js'

/**
 * SIGTERM (DESIGN "Limits and faults"): /readyz turns 503, the listener stops accepting, idle
 * kept-alive connections close, requests in flight finish within `graceMs` (their connections
 * close after the response), then the database closes and the process exits 0. Connections
 * still busy when the grace period ends are closed.
 */
async function stop(app: FastifyInstance, signal: string, graceMs: number): Promise<never> {
  app.lifecycle.phase = 'stopping'
  app.log.info({ signal, graceMs }, 'shutting down: finishing in-flight requests')
  const deadline = setTimeout(() => {
    app.log.warn('shutdown grace period over: closing the connections still open')
    app.server.closeAllConnections()
  }, graceMs)
  // Fastify's close stops accepting, waits for in-flight requests, then runs onClose (the database).
  await app.close()
  clearTimeout(deadline)
  app.log.info('stopped')
  process.exit(0)
}

async function main(): Promise<void> {
  const config = loadConfig()
  const app = await buildApp(config, { start: 'later' })
  let stopping = false
  const onSignal = (signal: string) => {
    if (stopping) return
    stopping = true
    void stop(app, signal, config.limits.shutdownGraceMs)
  }
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
  try {
    // The database first: one that does not exist or refuses the service fails the start before a port is bound.
    await app.preflight()
    // Then listen, before migrating, so that /readyz can say "starting" (docs/decisions.md); the line says so.
    await app.listen({ port: config.port, host: config.host, listenTextResolver: (address) => `Server listening at ${address} (starting: the API answers 503 until ready)` })
    await app.start()
  } catch (error) {
    await app.close()
    throw error
  }
  app.log.info('ready')
}

main().catch((error: unknown) => {
  // One line naming the problem; a ConfigError already names the variable.
  const message = error instanceof ConfigError ? `Invalid configuration: ${error.message}` : `Failed to start: ${operatorMessage(error)}`
  process.stderr.write(`${message}\n`)
  process.exit(1)
})

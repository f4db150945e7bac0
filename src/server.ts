/**
 * Starts the service: configuration, database, listen, migrations while /readyz says "starting",
 * and a graceful stop on SIGTERM and SIGINT.
 */
import type { FastifyInstance } from 'fastify'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

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
  await app.listen({ port: config.port, host: config.host })
  try {
    await app.start()
  } catch (error) {
    await app.close()
    throw error
  }
  app.log.info('ready')
}

main().catch((error: unknown) => {
  // One line naming the problem; a ConfigError already names the variable.
  const message = error instanceof ConfigError ? `Invalid configuration: ${error.message}` : `Failed to start: ${String(error instanceof Error ? error.message : error)}`
  process.stderr.write(`${message}\n`)
  process.exit(1)
})

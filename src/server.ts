/** Starts the service: configuration, database, listen, and a graceful stop on SIGTERM and SIGINT. */
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

async function main(): Promise<void> {
  const config = loadConfig()
  const app = await buildApp(config)
  let stopping = false
  const stop = async (signal: string) => {
    if (stopping) return
    stopping = true
    app.log.info({ signal }, 'shutting down: finishing in-flight requests')
    // Fastify's close stops accepting, waits for in-flight requests, then runs onClose (the database).
    await app.close()
    app.log.info('stopped')
    process.exit(0)
  }
  process.once('SIGTERM', (signal) => void stop(signal))
  process.once('SIGINT', (signal) => void stop(signal))
  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: unknown) => {
  // One line naming the problem; a ConfigError already names the variable.
  const message = error instanceof ConfigError ? `Invalid configuration: ${error.message}` : `Failed to start: ${String(error instanceof Error ? error.message : error)}`
  process.stderr.write(`${message}\n`)
  process.exit(1)
})

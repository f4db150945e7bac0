/** Work the service does now and then, on every instance, for as long as it runs. */
import type { FastifyInstance } from 'fastify'

/** How often expired rows (idempotency keys, old events) are deleted. */
export const PRUNE_EVERY_MS = 60 * 60_000

/**
 * Runs `task` every `everyMs` until the app closes; a failure is logged as `what` and the next
 * run tries again. Every instance may run it: deleting what another already deleted is harmless.
 */
export function every(app: FastifyInstance, everyMs: number, what: string, task: () => Promise<unknown>): void {
  const timer = setInterval(() => {
    task().catch((error: unknown) => app.log.warn({ err: error }, `could not ${what}`))
  }, everyMs)
  timer.unref()
  app.addHook('onClose', () => clearInterval(timer))
}

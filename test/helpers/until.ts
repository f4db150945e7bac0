/**
 * Polls `check` until it returns a value that is not undefined, for work a service does in the
 * background (a webhook worker's round). Bounded: after `tries` polls it throws, naming `what`.
 */
export async function until<T>(what: string, check: () => Promise<T | undefined>, { everyMs = 25, tries = 800 } = {}): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await check()
    if (value !== undefined) return value
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
  throw new Error(`gave up waiting for ${what}`)
}

/**
 * When a failed delivery is tried again (DESIGN "Events"): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and
 * 10 h after the attempts before, with the default base of 5 s; then it has failed. The base is
 * configurable (WEBHOOK_RETRY_BASE_MS) so that tests wait milliseconds, not seconds.
 */
const STEPS = [1, 60, 360, 1440, 3600, 7200, 7200]

/** The attempts a delivery gets, the first one included. */
export const MAX_ATTEMPTS = STEPS.length + 1

/** After `attempts` failed attempts, the delay before the next one; undefined when there is none. */
export function retryDelay(attempts: number, baseMs: number): number | undefined {
  const step = STEPS[attempts - 1]
  return step === undefined ? undefined : step * baseMs
}

/** A webhook whose every delivery has failed for this long is disabled. */
export const DISABLE_AFTER_MS = 24 * 60 * 60_000

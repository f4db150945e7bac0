/** The change feed as tests read it: where it ends now, and what came after. */
import { V1, type Api } from './api.js'

/** The id of the newest event: what a test's later events come after. */
export async function lastEvent(api: Api): Promise<number> {
  const events = (await api.admin.get(`${V1}/events?after=0&size=100`)).body as { id: number }[]
  return events.at(-1)?.id ?? 0
}

/** The events after `after` (at most 100), as `type item_id` lines. */
export async function eventsAfter(api: Api, after: number): Promise<string[]> {
  const feed = await api.admin.get(`${V1}/events?after=${after}&size=100`)
  return (feed.body as { type: string; item_id: string }[]).map((event) => `${event.type} ${event.item_id}`)
}

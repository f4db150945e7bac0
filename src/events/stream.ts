/**
 * The change feed as server-sent events (HTML Living Standard §9.2): `GET /events` with
 * `Accept: text/event-stream`. A stream starts after `Last-Event-ID` (what a browser's EventSource
 * sends when it reconnects) or `after=`, catches up from the table, then joins this instance's
 * tail. Any instance can resume any stream: positions live in the table, not in a process.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http'
import { finished } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { EventLog, Position, StoredEvent } from '../db/events.js'
import { ApiError } from '../errors.js'
import { matches, type EventFilter, type Subscriber, type Tailer } from './tailer.js'

export const EVENT_STREAM = 'text/event-stream'
/** The reconnection delay a stream asks its clients for (`retry:`). */
const RETRY_MS = 2000
/** Events read from the table at once while a stream catches up. */
const CATCH_UP_BATCH = 500
/**
 * A live stream with this much unsent is cut off: its client is not reading, and the tail does not
 * wait for one client. It resumes from the table, without a gap, when it reconnects.
 */
const MAX_UNSENT_BYTES = 1024 * 1024

/** The event as the feed shows it: its position stays inside. */
const eventJson = ({ position: _, ...event }: StoredEvent) => JSON.stringify(event)

/** Resolves when the client has taken what was written, or is gone. */
const drained = (raw: ServerResponse) =>
  new Promise<void>((resolve) => {
    const done = () => {
      raw.off('drain', done).off('close', done)
      resolve()
    }
    raw.on('drain', done).on('close', done)
  })

export interface EventStreams {
  /** Answers `request` with a stream of the events after `start` that pass `filter`. */
  open(request: FastifyRequest, reply: FastifyReply, start: Position, filter: EventFilter): Promise<void>
  /** Ends every stream (shutdown): their clients reconnect, to another instance. */
  closeAll(): void
}

export interface StreamLimits {
  /** Streams one caller may hold open at once on this instance (EVENT_STREAMS_PER_CALLER). */
  perCaller: number
  /** A comment line this often keeps proxies from closing an idle stream (EVENT_STREAM_HEARTBEAT_MS). */
  heartbeatMs: number
}

export function eventStreams(log: EventLog, tailer: Tailer, { perCaller, heartbeatMs }: StreamLimits): EventStreams {
  const open = new Set<ServerResponse>()
  const byCaller = new Map<string, number>()

  /**
   * Sends everything after the subscriber's position from the table, until it has read to the end;
   * a page at a time, each once the client has taken the one before. Stops when the client is gone.
   */
  async function catchUp(subscriber: Subscriber, raw: ServerResponse): Promise<void> {
    for (;;) {
      if (raw.writableNeedDrain) await drained(raw)
      if (raw.destroyed || raw.writableEnded) return
      // Unfiltered, so that the position moves over the events the filter leaves out too.
      const page = await log.page({ after: subscriber.position, types: [], prefixes: [], collections: [], limit: CATCH_UP_BATCH })
      for (const event of page) {
        subscriber.position = event.position
        if (matches(subscriber.filter, event)) subscriber.deliver(event)
      }
      if (page.length < CATCH_UP_BATCH) return
    }
  }

  return {
    async open(request, reply, start, filter) {
      const caller = request.caller!.user.id
      const streams = byCaller.get(caller) ?? 0
      if (streams >= perCaller) {
        throw new ApiError('RATE_LIMITED', `At most ${perCaller} event streams at once per caller; close one first.`, [], { headers: { 'retry-after': String(RETRY_MS / 1000) } })
      }
      byCaller.set(caller, streams + 1)
      reply.hijack()
      const raw = reply.raw
      raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), 'content-type': `${EVENT_STREAM}; charset=utf-8`, 'cache-control': 'no-store', 'x-accel-buffering': 'no' })
      raw.write(`retry: ${RETRY_MS}\n\n`)
      let closed = false
      let live = false
      const subscriber: Subscriber = {
        position: start,
        filter,
        deliver(event) {
          // A catch-up page may still be arriving after the client has gone, or a batch after a cut-off.
          if (closed || raw.destroyed) return
          raw.write(`id: ${event.id}\nevent: ${event.type}\ndata: ${eventJson(event)}\n\n`)
          if (live && raw.writableLength > MAX_UNSENT_BYTES) {
            request.log.info({ unsent: raw.writableLength }, 'event stream cut off: its client is not reading')
            raw.destroy()
          }
        },
      }
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), heartbeatMs)
      const cleanUp = () => {
        if (closed) return
        closed = true
        clearInterval(heartbeat)
        tailer.leave(subscriber)
        open.delete(raw)
        byCaller.set(caller, byCaller.get(caller)! - 1)
        if (byCaller.get(caller) === 0) byCaller.delete(caller)
      }
      // A client gone before this point has already had its `close`: finished() reports it anyway.
      finished(raw, cleanUp)
      open.add(raw)
      try {
        // Join the tail once caught up; if it has moved on past what it keeps, catch up again.
        do {
          live = false
          await catchUp(subscriber, raw)
          live = true
        } while (!closed && !(await tailer.join(subscriber)))
        if (closed) tailer.leave(subscriber)
      } catch (error) {
        request.log.error({ err: error }, 'event stream failed')
        raw.end()
      }
    },
    closeAll() {
      // Ended, then dropped: a client that stopped reading would otherwise hold the shutdown.
      for (const raw of open) raw.end(() => raw.destroy())
      setImmediate(() => {
        for (const raw of open) raw.destroy()
      })
    },
  }
}

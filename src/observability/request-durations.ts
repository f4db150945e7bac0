/**
 * `http_request_duration_seconds`: every answered request by method, route template and status,
 * and how long it took, as a Prometheus histogram. Observed in one onResponse hook from Fastify's
 * own clock (`reply.elapsedTime`, from the request's first hook): no timer object per request and
 * no label hashing; a series is found by one string key. fastify-metrics' timers and prom-client's
 * label hashing did the same for 5% of the CPU a product read costs (docs/performance.md).
 * Registered in a prom-client registry as a metric of its own, so the exposition is prom-client's.
 */

/** One line of the exposition, as prom-client's registry reads a metric's values. */
interface Value {
  metricName: string
  labels: Record<string, string | number>
  value: number
}

interface Series {
  labels: { method: string; route: string; status_code: string }
  /** Observations per bucket (not cumulative); the last counts those above every bound. */
  counts: Float64Array
  sum: number
  count: number
}

export class RequestDurations {
  readonly name = 'http_request_duration_seconds'
  readonly help = 'Requests answered, by method, route template and status, and how long they took in seconds'
  readonly type = 'histogram'
  readonly aggregator = 'sum'
  readonly #bounds: readonly number[]
  #series = new Map<string, Series>()

  /** `bounds`: the buckets' upper bounds in seconds, ascending. */
  constructor(bounds: readonly number[]) {
    this.#bounds = bounds
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`
    let series = this.#series.get(key)
    if (!series) {
      series = { labels: { method, route, status_code: String(status) }, counts: new Float64Array(this.#bounds.length + 1), sum: 0, count: 0 }
      this.#series.set(key, series)
    }
    let bucket = 0
    while (bucket < this.#bounds.length && seconds > this.#bounds[bucket]!) bucket++
    series.counts[bucket]! += 1
    series.sum += seconds
    series.count += 1
  }

  /** The histogram as prom-client's registry formats a metric: cumulative buckets, then the sum and the count. */
  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Value[] }> {
    const values: Value[] = []
    for (const { labels, counts, sum, count } of this.#series.values()) {
      let cumulative = 0
      this.#bounds.forEach((le, i) => {
        cumulative += counts[i]!
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le }, value: cumulative })
      })
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count })
      values.push({ metricName: `${this.name}_sum`, labels, value: sum })
      values.push({ metricName: `${this.name}_count`, labels, value: count })
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values })
  }
}

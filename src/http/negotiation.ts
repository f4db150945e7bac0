/**
 * Content negotiation (RFC 9110 §12.5.1): which JSON media type a response is sent as, from the
 * request's Accept and the API version being served.
 */

export const JSON_MEDIA_TYPE = 'application/json'

/** This API's vendor media type for version `n`: JSON, and a second way to ask for a version. */
export const vendorType = (version: number) => `application/vnd.resourceful.v${version}+json`

/** A vendor media type anywhere in a header value, with the version it names. */
export const VENDOR_TYPE = /application\/vnd\.resourceful\.v(\d+)\+json/i
/** A request body's Content-Type that is this API's vendor type (parameters may follow). */
export const VENDOR_BODY_TYPE = /^application\/vnd\.resourceful\.v(\d+)\+json\s*(?:;|$)/i

interface MediaRange {
  type: string
  q: number
}

/** The ranges of an Accept value, lower-cased, each with its weight (1 when absent or unreadable). */
function mediaRanges(accept: string): MediaRange[] {
  return accept.split(',').map((part) => {
    const [range = '', ...params] = part.split(';')
    const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined)
    return { type: range.trim().toLowerCase(), q: q === undefined ? 1 : Number(q) }
  })
}

/** The weight Accept gives `type`: that of the most specific range matching it; 0 when none does. */
function weightOf(ranges: MediaRange[], type: string): number {
  const [major] = type.split('/')
  let best: { specificity: number; q: number } = { specificity: -1, q: 0 }
  for (const range of ranges) {
    const specificity = range.type === type ? 2 : range.type === `${major}/*` ? 1 : range.type === '*/*' ? 0 : -1
    if (specificity > best.specificity) best = { specificity, q: range.q }
  }
  return best.q
}

export type Negotiated = { mediaType: string } | { refused: string }

/**
 * The media type to answer a request for `version` with: JSON, this version's vendor type when
 * Accept names it at a weight no lower than JSON's, or one of the route's `offers` so named. Another version's vendor type is not
 * on offer, so an Accept that asks only for it is refused like any other (RFC 9110 §15.5.7).
 */
export function negotiate(accept: string | undefined, version: number, offers: readonly string[] = []): Negotiated {
  // Most requests: no Accept, `*/*`, or JSON by name.
  if (accept === undefined || accept === '*/*' || accept === JSON_MEDIA_TYPE) return { mediaType: JSON_MEDIA_TYPE }
  const ranges = mediaRanges(accept)
  const vendor = vendorType(version)
  const json = weightOf(ranges, JSON_MEDIA_TYPE)
  const vendorWeight = ranges.some((r) => r.type === vendor) ? weightOf(ranges, vendor) : 0
  // A route's other media type (the event stream) when Accept names it, above JSON.
  for (const offer of offers) {
    const weight = ranges.some((r) => r.type === offer) ? weightOf(ranges, offer) : 0
    if (weight > 0 && weight >= json && weight >= vendorWeight) return { mediaType: offer }
  }
  if (vendorWeight > 0 && vendorWeight >= json) return { mediaType: vendor }
  if (json > 0) return { mediaType: JSON_MEDIA_TYPE }
  const other = ranges.find((r) => r.q > 0 && VENDOR_TYPE.test(r.type))
  if (other) return { refused: `This path serves version ${version}; Accept asks for ${other.type}.` }
  if (offers.length === 0) return { refused: `Responses are ${JSON_MEDIA_TYPE} or ${vendor}; the Accept header admits neither.` }
  return { refused: `Responses are ${[JSON_MEDIA_TYPE, vendor, ...offers].join(', ')}; the Accept header admits none of them.` }
}

/** The version named by the most preferred vendor type in Accept (weight above 0), if any. */
export function requestedVersion(accept: string): number | undefined {
  let best: { version: number; q: number } | undefined
  for (const range of mediaRanges(accept)) {
    const named = VENDOR_TYPE.exec(range.type)
    if (named && range.q > 0 && (!best || range.q > best.q)) best = { version: Number(named[1]), q: range.q }
  }
  return best?.version
}

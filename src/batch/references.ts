/**
 * References to earlier operations' results in a batch (DESIGN "Writing many"): `{$0.id}` is the
 * `id` of operation 0's answer body, `{$2.items.0.id}` reaches into it. In a path a reference
 * becomes its value's text, percent-encoded; in a body a string that is one reference becomes the
 * value itself (a number stays a number), and references inside a longer string become their text.
 */
import { ApiError } from '../errors.js'

/** What an operation answered, as far as a later one can refer to it. */
export interface Answered {
  status: number
  body: unknown
}

const REFERENCE = /\{\$(\d+)((?:\.[^.{}$]+)*)\}/g
const WHOLE = /^\{\$(\d+)((?:\.[^.{}$]+)*)\}$/

/** The operations `text` refers to, by index. */
export function referencesIn(text: string): number[] {
  return [...text.matchAll(REFERENCE)].map((match) => Number(match[1]))
}

/** Every string of a JSON value, with its path below `at` (`body.items[0].id`). */
export function* stringsIn(value: unknown, at: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [at, value]
  else if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* stringsIn(item, `${at}[${i}]`)
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) yield* stringsIn(item, `${at}.${key}`)
}

/** 424: an operation refers to one that failed (`"atomic": false`), so it does not run. */
const failedBefore = (index: number, field: string) =>
  new ApiError('FAILED_DEPENDENCY', `It refers to operation ${index}, which failed.`, [{ field, reason: `refers to operation ${index}, which failed` }])

/** The value `{$index.path}` names; `field` is where the reference is, for the error. */
function valueOf(answers: readonly Answered[], index: number, path: string, field: string): unknown {
  const answered = answers[index]!
  if (answered.status >= 400) throw failedBefore(index, field)
  let value = answered.body
  for (const key of path.split('.').slice(1)) {
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined
  }
  if (value === undefined) {
    throw new ApiError('VALIDATION_ERROR', `{$${index}${path}} names nothing in operation ${index}'s answer.`, [{ field, reason: `refers to $${index}${path}, which operation ${index}'s answer does not have` }])
  }
  return value
}

/** A value as text inside a path or a longer string: only a string, a number or a boolean has one. */
function textOf(value: unknown, reference: string, field: string): string {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value)
  throw new ApiError('VALIDATION_ERROR', `${reference} is not a string, a number or a boolean, so it cannot be part of text.`, [{ field, reason: `refers to ${reference}, which is not text` }])
}

/** `path` with its references replaced by their values, percent-encoded. */
export function resolvePath(path: string, answers: readonly Answered[], field: string): string {
  return path.replace(REFERENCE, (reference, index: string, rest: string) => encodeURIComponent(textOf(valueOf(answers, Number(index), rest, field), reference, field)))
}

/** `body` with its references replaced by their values. */
export function resolveBody(body: unknown, answers: readonly Answered[], at: string): unknown {
  if (typeof body === 'string') {
    const whole = WHOLE.exec(body)
    if (whole) return valueOf(answers, Number(whole[1]), whole[2]!, at)
    return body.replace(REFERENCE, (reference, index: string, rest: string) => textOf(valueOf(answers, Number(index), rest, at), reference, at))
  }
  if (Array.isArray(body)) return body.map((item, i) => resolveBody(item, answers, `${at}[${i}]`))
  if (body !== null && typeof body === 'object') return Object.fromEntries(Object.entries(body).map(([key, item]) => [key, resolveBody(item, answers, `${at}.${key}`)]))
  return body
}

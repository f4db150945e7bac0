/**
 * `filter=<expression>` (DESIGN "Reading"): AND, OR, NOT and parentheses over the bracket
 * filters' fields and operators, in the grammar of Google's AIP-160:
 *
 *   expression = term { ("AND" | "OR") term }     one of the two at one level, never both
 *   term       = ["NOT" | "-"] ( "(" expression ")" | comparison )
 *   comparison = field ( "=" | "!=" | "<" | "<=" | ">" | ">=" | ":" ) value
 *   value      = number | "string" | true | false | null
 *
 * AIP-160 binds OR tighter than AND, which surprises most readers: both at one level without
 * parentheses is refused, and the parentheses the client adds say what it means. The parser is
 * total: every input ends in a Filter or in a 400 naming `filter`, the position (from 1) and what
 * was expected there. Values are typed by their field exactly as the bracket filters' are
 * (values.ts) and reach SQL as parameters (to-sql.ts).
 */
import type { Field } from '../fields.js'
import type { Filter, FilterValue, ListSpec } from './plan.js'
import { closestName } from './suggest.js'
import { parseValue } from './values.js'

/** Longest expression taken (characters). */
export const MAX_FILTER_EXPRESSION_LENGTH = 2000
/** Most comparisons in one expression. */
export const MAX_COMPARISONS = 20
/** Deepest nesting of parentheses and NOT. */
export const MAX_DEPTH = 5

type Token =
  | { kind: 'name'; text: string; at: number }
  | { kind: 'string'; text: string; at: number }
  | { kind: 'number'; text: string; at: number }
  | { kind: 'op'; text: string; at: number }
  | { kind: 'end'; text: ''; at: number }

const NAME = /[A-Za-z_][A-Za-z0-9_.]*/y
const NUMBER = /-?\d+(\.\d+)?/y
const OPERATOR = /<=|>=|!=|=|<|>|:|\(|\)|-/y
const SPACE = /\s+/y

class FilterError extends Error {
  constructor(readonly at: number, readonly reason: string) {
    super(reason)
  }
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let at = 0
  const match = (pattern: RegExp) => {
    pattern.lastIndex = at
    return pattern.exec(text)?.[0]
  }
  while (at < text.length) {
    const space = match(SPACE)
    if (space) {
      at += space.length
      continue
    }
    if (text[at] === '"') {
      let value = ''
      let end = at + 1
      for (; end < text.length && text[end] !== '"'; end++) {
        // A backslash keeps the next character as it is: \" and \\.
        if (text[end] === '\\') end++
        if (end < text.length) value += text[end]
      }
      if (end >= text.length) throw new FilterError(at + 1, 'a string is not closed: expected "')
      tokens.push({ kind: 'string', text: value, at: at + 1 })
      at = end + 1
      continue
    }
    const number = match(NUMBER)
    // `-` is NOT before a name or a parenthesis, a sign before digits.
    if (number) {
      tokens.push({ kind: 'number', text: number, at: at + 1 })
      at += number.length
      continue
    }
    const name = match(NAME)
    if (name) {
      tokens.push({ kind: 'name', text: name, at: at + 1 })
      at += name.length
      continue
    }
    const op = match(OPERATOR)
    if (op) {
      tokens.push({ kind: 'op', text: op, at: at + 1 })
      at += op.length
      continue
    }
    throw new FilterError(at + 1, `unexpected "${text[at]}": expected a field, a value, an operator or a parenthesis`)
  }
  tokens.push({ kind: 'end', text: '', at: text.length + 1 })
  return tokens
}

const COMPARATORS = new Set(['=', '!=', '<', '<=', '>', '>=', ':'])
const ORDERED = { '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const
/** The comparators a field takes, as its bracket operators allow (parse.ts). */
function comparatorsOf(field: Field, spec: Pick<ListSpec, 'searchable'>): string[] {
  const ordered = field.kind === 'integer' || field.kind === 'number' || field.kind === 'datetime'
  return [
    '=', '!=',
    ...(ordered ? ['<', '<=', '>', '>='] : []),
    ...(field.kind === 'string[]' || spec.searchable.has(field.name) ? [':'] : []),
  ]
}

const describe = (token: Token) => (token.kind === 'end' ? 'the end' : `"${token.text}"`)

function parse(text: string, spec: ListSpec): Filter {
  const tokens = tokenize(text)
  let next = 0
  let comparisons = 0
  const peek = () => tokens[next]!
  const take = () => tokens[next++]!
  const keyword = (token: Token, word: string) => token.kind === 'name' && token.text === word

  function expression(depth: number): Filter {
    const first = term(depth)
    let joiner: 'AND' | 'OR' | undefined
    const terms = [first]
    for (;;) {
      const token = peek()
      const word = keyword(token, 'AND') ? 'AND' : keyword(token, 'OR') ? 'OR' : undefined
      if (!word) break
      if (joiner && word !== joiner) throw new FilterError(token.at, `${word} after ${joiner} at one level: add parentheses to say which comes first, such as (a AND b) OR c`)
      joiner = word
      take()
      terms.push(term(depth))
    }
    if (!joiner) return first
    return { kind: joiner === 'AND' ? 'all' : 'any', filters: terms }
  }

  function term(depth: number): Filter {
    if (depth > MAX_DEPTH) throw new FilterError(peek().at, `nested more than ${MAX_DEPTH} deep`)
    const token = peek()
    if (keyword(token, 'NOT') || (token.kind === 'op' && token.text === '-')) {
      take()
      return { kind: 'negate', filter: term(depth + 1) }
    }
    if (token.kind === 'op' && token.text === '(') {
      take()
      const inner = expression(depth + 1)
      const close = take()
      if (!(close.kind === 'op' && close.text === ')')) throw new FilterError(close.at, `expected ) or AND or OR, found ${describe(close)}`)
      return inner
    }
    return comparison()
  }

  function comparison(): Filter {
    const name = take()
    if (name.kind !== 'name' || name.text === 'AND' || name.text === 'OR' || name.text === 'NOT') {
      throw new FilterError(name.at, `expected a field, NOT or (, found ${describe(name)}`)
    }
    const [first, second, ...rest] = name.text.split('.')
    const relation = second === undefined ? undefined : spec.relations?.get(first!)
    if (second !== undefined && (!relation || rest.length > 0)) {
      const known = [...(spec.relations?.keys() ?? [])]
      throw new FilterError(name.at, `cannot filter by "${name.text}": ${rest.length > 0 ? 'one dot at most, a relation and its field' : `no relation "${first}"`}${known.length > 0 ? `; relations: ${known.join(', ')}` : ''}`)
    }
    const scope = relation ?? spec
    const field = scope.filterable.get(second ?? first!)
    if (!field) {
      const known = [...scope.filterable.keys()]
      const hint = closestName(second ?? first!, known)
      const whose = relation ? ` of ${first}` : ''
      throw new FilterError(name.at, `cannot filter by "${name.text}"${hint ? ` (did you mean ${relation ? `${first}.` : ''}${hint}?)` : ''}; filterable fields${whose}: ${known.join(', ')}`)
    }
    const within = (filter: Filter): Filter => (relation ? { kind: 'related', relation, filter } : filter)
    if (++comparisons > MAX_COMPARISONS) throw new FilterError(name.at, `more than ${MAX_COMPARISONS} comparisons`)
    const op = take()
    if (op.kind !== 'op' || !COMPARATORS.has(op.text)) throw new FilterError(op.at, `expected a comparison (= != < <= > >= :) after ${field.name}, found ${describe(op)}`)
    const allowed = comparatorsOf(field, scope)
    if (!allowed.includes(op.text)) throw new FilterError(op.at, `${op.text} is not supported on ${field.name}; use one of ${allowed.join(' ')}`)
    const value = take()
    if (value.kind === 'name' && value.text === 'null') {
      if (op.text !== '=' && op.text !== '!=') throw new FilterError(value.at, `null compares only with = or !=`)
      if (!field.nullable) throw new FilterError(value.at, `${field.name} is never null`)
      return within({ kind: 'null', field, isNull: op.text === '=' })
    }
    if (value.kind !== 'string' && value.kind !== 'number' && !(value.kind === 'name' && (value.text === 'true' || value.text === 'false'))) {
      throw new FilterError(value.at, `expected a value after ${field.name} ${op.text}: a number, a "string", true, false or null; found ${describe(value)}`)
    }
    const parsed = parseValue(field, value.text)
    if (!parsed.ok) throw new FilterError(value.at, `${field.name} ${parsed.reason}`)
    return within(filterOf(field, op.text, parsed.value))
  }

  const filter = expression(0)
  const rest = peek()
  if (rest.kind !== 'end') throw new FilterError(rest.at, `expected AND, OR or the end, found ${describe(rest)}`)
  return filter
}

function filterOf(field: Field, op: string, value: FilterValue): Filter {
  switch (op) {
    case '=':
      return { kind: 'anyOf', field, values: [value] }
    case '!=':
      return { kind: 'not', field, value }
    case ':':
      // Has, for an array; contains, for text.
      return field.kind === 'string[]' ? { kind: 'anyOf', field, values: [value] } : { kind: 'contains', field, value: String(value) }
    default:
      return { kind: 'compare', field, op: ORDERED[op as keyof typeof ORDERED], value }
  }
}

/** The filter an expression stands for, or why it is none: the position (from 1) and what was expected there. */
export function parseFilterExpression(text: string, spec: ListSpec): { ok: true; filter: Filter } | { ok: false; reason: string } {
  if (text.length > MAX_FILTER_EXPRESSION_LENGTH) return { ok: false, reason: `must be at most ${MAX_FILTER_EXPRESSION_LENGTH} characters` }
  if (text.trim() === '') return { ok: false, reason: 'must be an expression, such as status = "active" AND price < 10' }
  try {
    return { ok: true, filter: parse(text, spec) }
  } catch (error) {
    if (error instanceof FilterError) return { ok: false, reason: `at ${error.at}: ${error.reason}` }
    throw error
  }
}

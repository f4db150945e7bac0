/**
 * fast-check arbitraries from the JSON Schemas of an OpenAPI document: values a schema accepts,
 * and values it refuses (a wrong type, a number out of range, a string too long or off its
 * pattern, a value off its enum, an object missing a required property or with one it does not
 * have). Covers the keywords the service's schemas use.
 */
import fc from 'fast-check'

export type Schema = { [keyword: string]: any }

/** Strings at most this long, unless a schema needs longer: long enough to matter, short enough to send many. */
const LONGEST = 40

const matching = new Map<string, fc.Arbitrary<string>>()

/**
 * Strings matching a pattern, made once per pattern: making one costs far more than drawing from
 * it (fast-check tokenizes its sample strings with every character class of the pattern: 40 s
 * of the property test's CPU when made anew for each generated request). Drawing is the same.
 */
export function stringMatching(pattern: string): fc.Arbitrary<string> {
  let arbitrary = matching.get(pattern)
  if (!arbitrary) matching.set(pattern, (arbitrary = fc.stringMatching(new RegExp(pattern))))
  return arbitrary
}

/** Valid and invalid values of the schemas of one document (its `components.schemas` resolve `$ref`s). */
export function schemaArbitraries(schemas: Record<string, Schema>) {
  const resolve = (schema: Schema): Schema => (schema.$ref ? resolve(schemas[String(schema.$ref).replace('#/components/schemas/', '')]!) : schema)
  const typesOf = (schema: Schema): string[] => [schema.type ?? []].flat()

  function string(schema: Schema): fc.Arbitrary<string> {
    switch (schema.format) {
      case 'uuid':
        return fc.uuid()
      case 'date-time':
        return fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString())
      case 'email':
        return fc.emailAddress().filter((email) => email.length <= (schema.maxLength ?? 254))
      case 'uri':
        // Loopback only: the service delivers webhooks to the URLs it is given.
        return fc.integer({ min: 1, max: 65_535 }).map((port) => `http://127.0.0.1:${port}/hooks`)
    }
    const minLength = schema.minLength ?? 0
    const maxLength = Math.max(minLength, Math.min(schema.maxLength ?? LONGEST, LONGEST))
    if (schema.pattern) return stringMatching(schema.pattern).filter((text) => text.length >= minLength && text.length <= (schema.maxLength ?? Infinity))
    return fc.string({ minLength, maxLength, unit: 'grapheme' })
  }

  function number(schema: Schema, integer: boolean): fc.Arbitrary<number> {
    const min = schema.minimum ?? -(2 ** 31)
    const max = schema.maximum ?? 2 ** 31 - 1
    if (integer) return fc.integer({ min, max })
    // A decimal column's values: whole hundredths (`x-decimals`), or any double in range.
    const decimals = schema['x-decimals'] as number | undefined
    if (decimals !== undefined) return fc.integer({ min: Math.ceil(min * 10 ** decimals), max: Math.floor(max * 10 ** decimals) }).map((n) => n / 10 ** decimals)
    return fc.double({ min, max, noNaN: true, noDefaultInfinity: true })
  }

  /** A value `schema` accepts. */
  function valid(given: Schema): fc.Arbitrary<unknown> {
    const schema = resolve(given)
    if ('const' in schema) return fc.constant(schema.const)
    if (schema.enum) return fc.constantFrom(...(schema.enum as unknown[]))
    const options = schema.anyOf ?? schema.oneOf
    if (options) return fc.oneof(...(options as Schema[]).map(valid))
    const types = typesOf(schema)
    if (types.length > 1) return fc.oneof(...types.map((type) => valid({ ...schema, type })))
    switch (types[0]) {
      case 'null':
        return fc.constant(null)
      case 'boolean':
        return fc.boolean()
      case 'integer':
      case 'number':
        return number(schema, types[0] === 'integer')
      case 'string':
        return string(schema)
      case 'array': {
        const constraints = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) }
        return schema.uniqueItems ? fc.uniqueArray(valid(schema.items ?? {}), { ...constraints, selector: (item) => JSON.stringify(item) }) : fc.array(valid(schema.items ?? {}), constraints)
      }
      case 'object': {
        const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>)
        return fc.record(Object.fromEntries(properties.map(([name, property]) => [name, valid(property)])), { requiredKeys: schema.required ?? [] })
      }
      default:
        return fc.jsonValue({ maxDepth: 2 })
    }
  }

  /** A value `schema` refuses, by one of the ways it can refuse; undefined when it refuses nothing. */
  function invalid(given: Schema): fc.Arbitrary<unknown> | undefined {
    const schema = resolve(given)
    const types = typesOf(schema)
    const ways: fc.Arbitrary<unknown>[] = []
    // Another JSON type than any the schema takes.
    const others = ['string', 'number', 'boolean', 'object', 'array', 'null'].filter((type) => !types.includes(type) && !(type === 'number' && types.includes('integer')))
    if (types.length > 0 && others.length > 0) ways.push(fc.constantFrom(...others).map((type) => ({ string: 'text', number: 1.5, boolean: true, object: {}, array: [], null: null })[type]))
    if (schema.enum) ways.push(fc.constant('not-one-of-them'))
    if (schema.maximum !== undefined) ways.push(fc.constant(types.includes('integer') ? schema.maximum + 1 : schema.maximum * 2 + 1))
    if (schema.minimum !== undefined) ways.push(fc.constant(schema.minimum - 1))
    if (schema.maxLength !== undefined) ways.push(fc.constant('a'.repeat(schema.maxLength + 1)))
    if (schema.minLength) ways.push(fc.constant(''))
    if (schema.pattern || schema.format) ways.push(fc.constantFrom('not valid!', ' ', '0'))
    // One item too many. A long limit (an array POST's 1,000 items) repeats one item: the service
    // checks every one all the same, and generating 1,001 would cost the test more than the request.
    if (schema.maxItems !== undefined && schema.items) {
      ways.push(
        schema.maxItems > 20
          ? valid(schema.items).map((item) => Array.from({ length: schema.maxItems + 1 }, () => item))
          : fc.array(valid(schema.items), { minLength: schema.maxItems + 1, maxLength: schema.maxItems + 1 }),
      )
    }
    if (types.includes('object') && schema.properties) {
      const properties = Object.entries(schema.properties as Record<string, Schema>)
      const whole = valid(schema) as fc.Arbitrary<Record<string, unknown>>
      if (schema.required?.length) ways.push(fc.tuple(whole, fc.constantFrom(...(schema.required as string[]))).map(([value, name]) => omit(value, name)))
      if (schema.additionalProperties === false) ways.push(whole.map((value) => ({ ...value, not_a_field: 1 })))
      // One property invalid, the rest valid.
      const refusing = properties.flatMap(([name, property]) => {
        const bad = invalid(property)
        return bad ? [fc.tuple(whole, bad).map(([value, wrong]) => ({ ...value, [name]: wrong }))] : []
      })
      if (refusing.length > 0) ways.push(fc.oneof(...refusing))
    }
    return ways.length > 0 ? fc.oneof(...ways) : undefined
  }

  return { valid, invalid, resolve }
}

const omit = (value: Record<string, unknown>, name: string) => Object.fromEntries(Object.entries(value).filter(([key]) => key !== name))

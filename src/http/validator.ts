/** The JSON Schema validator's settings: strict types, every error reported, exact decimal places. */
import type { Ajv } from 'ajv'
import type { FastifyServerOptions } from 'fastify'
import ajvFormats, { type FormatsPlugin } from 'ajv-formats'

// ajv-formats is CommonJS; under ESM its plugin may sit on `.default`.
const formatsPlugin = ((ajvFormats as { default?: FormatsPlugin }).default ?? ajvFormats) as FormatsPlugin

interface DecimalsValidator {
  (places: number, value: number): boolean
  errors?: { keyword: string; message: string; params: Record<string, unknown> }[]
}

/**
 * `x-decimals: n`: at most n digits after the point. Read from the number's shortest text form,
 * which for a value parsed from JSON is the text that was sent, so there is no floating-point
 * tolerance to tune (`multipleOf: 0.01` fails on 1234567.89).
 */
const decimals: DecimalsValidator = (places, value) => {
  const text = String(value)
  const ok = !/e/i.test(text) && (text.split('.')[1]?.length ?? 0) <= places
  decimals.errors = ok ? [] : [{ keyword: 'x-decimals', message: `must have at most ${places} decimal places`, params: { places } }]
  return ok
}

export const AJV_OPTIONS: FastifyServerOptions['ajv'] = {
  customOptions: {
    // Report every failing field, not the first (the spec's details[] lists them all).
    allErrors: true,
    // "5" is not 5 in a JSON body; the query string is parsed by the list parser, not by Ajv.
    coerceTypes: false,
    removeAdditional: false,
    // Defaults are applied by the collection factory so that null and absent mean the same.
    useDefaults: false,
    keywords: [{ keyword: 'x-decimals', type: 'number', schemaType: 'number', validate: decimals, errors: true }],
  },
  // Fastify types plugins with `options: unknown`; ajv-formats' own options type is narrower.
  // `int32` and `int64` only describe (the document's integer formats): each such schema has its
  // bounds, and ajv-formats' check would add a second detail to every value out of range.
  plugins: [formatsPlugin as never, (ajv: Ajv) => ajv.addFormat('int32', true).addFormat('int64', true)],
}

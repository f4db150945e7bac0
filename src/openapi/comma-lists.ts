/**
 * A list's `field[in]` parameter takes comma-separated values of the field (list-query/parse.ts
 * splits it and reads each as `field=` would be read). The route's schema bounds its length; the
 * document also says what each value is, with a pattern built from the `field=` parameter's
 * schema: an enum, a pattern, a UUID or an integer (free text is anything but a comma, and stays
 * as it is).
 */

interface Parameter {
  name: string
  in: string
  schema: Record<string, unknown>
}

interface Document {
  paths: Record<string, Record<string, { parameters?: Parameter[] }>>
}

/** What the parser reads as a UUID (ids.ts), in either case. */
const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'
/** What the parser reads as an integer (list-query/values.ts); its range is checked after. */
const INTEGER = '-?[0-9]{1,15}'

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** One value of a `field=` parameter as a regular expression without anchors, when its schema says what it is. */
function valuePattern(schema: Record<string, unknown>): string | undefined {
  if (Array.isArray(schema.enum)) return `(${schema.enum.map((value) => escape(String(value))).join('|')})`
  if (typeof schema.pattern === 'string' && /^\^.*\$$/.test(schema.pattern)) return `(${schema.pattern.slice(1, -1)})`
  if (schema.format === 'uuid') return UUID
  if (schema.type === 'integer') return INTEGER
  return undefined
}

/** Adds each `field[in]` parameter's pattern: its field's values, separated by commas. */
export function describeCommaLists(generated: unknown): void {
  for (const operation of Object.values((generated as Document).paths).flatMap((item) => Object.values(item))) {
    const query = (operation.parameters ?? []).filter((parameter) => parameter.in === 'query')
    for (const list of query.filter((parameter) => parameter.name.endsWith('[in]'))) {
      const one = query.find((parameter) => parameter.name === list.name.slice(0, -'[in]'.length))
      const value = one && valuePattern(one.schema)
      if (value) list.schema = { ...list.schema, pattern: `^${value}(,${value})*$` }
    }
  }
}

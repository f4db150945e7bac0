/** JSON Schema shapes that any layer's TypeBox schemas use: auth's request bodies as much as the collections'. */
import { Type, type TUnsafe } from 'typebox'

/** A string from a fixed set; `type: "string"` is kept so serializers and filters know the type. */
export function StringEnum<const V extends readonly string[]>(values: V, options: Record<string, unknown> = {}): TUnsafe<V[number]> {
  return Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options })
}

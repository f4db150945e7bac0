// Duplicate keys and deep nesting in a JSON body are refused, not silently resolved (SEC-03, SEC-06;
// RFC 8259 §4, RFC 7493 §2.3).
import t from 'tap'
import { MAX_JSON_DEPTH, structureProblem } from '../../src/http/json-structure.js'

const duplicate = (key: string) => ({ kind: 'duplicate', key })

t.test('finds a key given twice in any one object, after unescaping', async (t) => {
  t.same(structureProblem('{"a":1,"a":2}'), duplicate('a'))
  t.same(structureProblem('{"a":1,"\\u0061":2}'), duplicate('a'))
  t.same(structureProblem('{"x":{"b":1,"c":{"d":[{"e":1,"e":2}]}}}'), duplicate('e'))
  t.same(structureProblem('{"q\\"uote":1,"q\\"uote":2}'), duplicate('q"uote'))
})

t.test('the same key in different objects, or as a value, is not a duplicate', async (t) => {
  t.equal(structureProblem('{"a":{"x":1},"b":{"x":1}}'), undefined)
  t.equal(structureProblem('{"a":"a","b":["a","a"],"c":"{\\"a\\":1,\\"a\\":2}"}'), undefined)
  t.equal(structureProblem('{"tags":["x","x"],"n":{},"m":[]}'), undefined)
})

t.test(`nesting up to ${MAX_JSON_DEPTH} levels is fine, one more is too deep`, async (t) => {
  const nested = (depth: number) => `${'['.repeat(depth - 1)}{}${']'.repeat(depth - 1)}`
  t.equal(structureProblem(nested(MAX_JSON_DEPTH)), undefined)
  t.same(structureProblem(nested(MAX_JSON_DEPTH + 1)), { kind: 'too-deep' })
  t.same(structureProblem(`{"a":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`), { kind: 'too-deep' })
  t.equal(structureProblem(`{"s":"${'['.repeat(1000)}"}`), undefined, 'brackets inside strings are text')
})

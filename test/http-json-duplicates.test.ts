// Duplicate keys in a JSON body are refused, not silently resolved (SEC-03; RFC 8259 §4, RFC 7493 §2.3).
import t from 'tap'
import { duplicateKey } from '../src/http/json-duplicates.js'

t.test('finds a key given twice in any one object, after unescaping', async (t) => {
  t.equal(duplicateKey('{"a":1,"a":2}'), 'a')
  t.equal(duplicateKey('{"a":1,"\\u0061":2}'), 'a')
  t.equal(duplicateKey('{"x":{"b":1,"c":{"d":[{"e":1,"e":2}]}}}'), 'e')
  t.equal(duplicateKey('{"q\\"uote":1,"q\\"uote":2}'), 'q"uote')
})

t.test('the same key in different objects, or as a value, is not a duplicate', async (t) => {
  t.equal(duplicateKey('{"a":{"x":1},"b":{"x":1}}'), undefined)
  t.equal(duplicateKey('{"a":"a","b":["a","a"],"c":"{\\"a\\":1,\\"a\\":2}"}'), undefined)
  t.equal(duplicateKey('{"tags":["x","x"],"n":{},"m":[]}'), undefined)
  t.equal(duplicateKey(`{"deep":${'['.repeat(5000)}${']'.repeat(5000)}}`), undefined)
})

/** The examples of docs/reference/api.md answer as the page says (test/helpers/doc-pages.ts). */
import { testPages } from '../helpers/doc-pages.js'

testPages((file) => file === 'docs/reference/api.md')

/** The examples of docs/getting-started.md answer as the page says (test/helpers/doc-pages.ts). */
import { testPages } from '../helpers/doc-pages.js'

testPages((file) => file === 'docs/getting-started.md')

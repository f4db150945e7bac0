/** The examples of docs/events.md answer as the page says (test/helpers/doc-pages.ts). */
import { testPages } from '../helpers/doc-pages.js'

testPages((file) => file === 'docs/events.md')

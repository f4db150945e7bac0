/** The examples of README.md and every page of docs/ without a file of its own answer as the page says (test/helpers/doc-pages.ts). */
import { OWN_FILES, testPages } from '../helpers/doc-pages.js'

testPages((file) => !OWN_FILES.includes(file))

/** Floor 1: a bare node:http server answering one constant JSON body of the same size as the service's. */
import { createServer } from 'node:http'

const [status, body] = [Number(process.argv[2]), Buffer.from(process.argv[3]!)]
// An ETag too, so a revalidation scenario can read one before sending If-None-Match.
const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(body.length), etag: '"constant"' }

const server = createServer((request, response) => {
  request.resume()
  request.on('end', () => response.writeHead(status, headers).end(body))
})
server.listen(0, '127.0.0.1', () => {
  const address = server.address()
  process.stdout.write(`listening ${typeof address === 'object' && address ? address.port : 0}\n`)
})

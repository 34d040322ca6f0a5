/**
 * The reference ceiling for file transfers: a bare Node `http` server that streams an upload's
 * body to a file (POST) and streams that file back (GET), with no parsing, checks or database.
 * Usage: file-ceiling-server DIR. Prints the port it listens on.
 */
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const file = join(process.argv[2] ?? '.', 'ceiling.bin');
const server = createServer((request, response) => {
  if (request.method === 'POST') {
    pipeline(request, createWriteStream(file)).then(
      () => response.writeHead(200).end(),
      () => response.writeHead(500).end(),
    );
    return;
  }
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': statSync(file).size });
  createReadStream(file).pipe(response);
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

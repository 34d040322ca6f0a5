import { connect } from 'node:net';

/**
 * Sends `GET path` as a raw request line and resolves with the whole raw answer, so that `..`
 * and `%2e` reach the server undecoded and unnormalised (fetch and `http.get` with a URL resolve
 * them first). The status is `answer.split(' ')[1]`.
 */
export function rawGet(baseUrl: string, path: string): Promise<string> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(`GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nConnection: close\r\n\r\n`);
    });
    let data = '';
    socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

import { request } from 'node:https';
import type { RequestOptions, TestResponse } from './test-server.js';

/**
 * Like TestServer.request, for a server on the private test CA (Node's fetch cannot be given
 * a CA without an extra package): the official-client suites use it beside the CLI.
 */
export function httpsRequest(baseUrl: string, ca: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  let body = options.body;
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json; charset=utf-8';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded; charset=utf-8';
    body = new URLSearchParams(options.form).toString();
  }
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { method, headers, ca, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        const responseHeaders = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') responseHeaders.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: responseHeaders, text, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

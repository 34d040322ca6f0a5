/**
 * How the capacity benchmarks talk to the server: HTTPS through one undici pool with keep-alive
 * connections (many clients' connections multiplexed onto a bounded set, as behind a load
 * balancer), the official clients' headers, and answers checked: a status other than the one
 * expected is an error with the body's first words; 429 with Retry-After is a deliberate shed.
 */
import { Agent, request } from 'undici';
import { CLIENT_HEADERS } from '../harness.js';

export class Shed extends Error {}

export interface Client {
  base: string;
  send<T = unknown>(method: string, path: string, init?: SendInit): Promise<T>;
  close(): Promise<void>;
}

export interface SendInit {
  token?: string;
  json?: unknown;
  form?: Record<string, string>;
  headers?: Record<string, string>;
  /** The status that means success (200 unless said). */
  expect?: number;
  /** 429 with Retry-After is an answer the caller counts as shed, not an error. */
  mayShed?: boolean;
  /** Answer the body's text unparsed (a sync of megabytes: parsing it would cost the generator more than checking it). */
  raw?: boolean;
}

export function createClient(base: string, ca: string | undefined, connections = 128): Client {
  const dispatcher = new Agent({ connections, pipelining: 1, keepAliveTimeout: 30_000, connect: ca ? { ca } : {} });
  return {
    base,
    async send<T>(method: string, path: string, init: SendInit = {}): Promise<T> {
      const headers: Record<string, string> = { ...CLIENT_HEADERS, ...init.headers };
      let body: string | undefined;
      if (init.json !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(init.json);
      } else if (init.form) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        body = new URLSearchParams(init.form).toString();
      }
      if (init.token) headers.authorization = `Bearer ${init.token}`;
      const res = await request(base + path, { method: method as 'GET', headers, ...(body === undefined ? {} : { body }), dispatcher });
      const text = await res.body.text();
      if (res.statusCode === 429 && init.mayShed && res.headers['retry-after']) throw new Shed(`${method} ${path}: 429, retry after ${String(res.headers['retry-after'])} s`);
      if (res.statusCode !== (init.expect ?? 200)) throw new Error(`${method} ${path.replace(/[0-9a-f-]{36}/g, '{id}')}: ${res.statusCode} ${text.slice(0, 160)}`);
      return (text && !init.raw && res.headers['content-type']?.toString().includes('json') ? JSON.parse(text) : text) as T;
    },
    close: () => dispatcher.close(),
  };
}

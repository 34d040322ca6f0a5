import { execFileSync } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { LOG_BUFFER_LIMIT_BYTES, loggerOptions, OneLinePerRequest, stdoutLogStream } from './logging.js';

/** A stand-in for standard output that records each write it is given. */
function recordingOutput() {
  const out = new PassThrough();
  const writes: string[] = [];
  const write = out.write.bind(out);
  out.write = ((chunk: string) => {
    writes.push(chunk);
    return write(chunk);
  }) as typeof out.write;
  out.resume();
  return { out, writes };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('the log destination', () => {
  it('writes the lines of one turn of the event loop in one write, in order, right after it', async () => {
    const { out, writes } = recordingOutput();
    const log = stdoutLogStream(out);
    log.write('one\n');
    log.write('two\n');
    log.write('three\n');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(['one\ntwo\nthree\n']);
    log.write('four\n');
    await nextTurn();
    expect(writes).toEqual(['one\ntwo\nthree\n', 'four\n']);
  });

  it('drops lines once the output is gone', async () => {
    const { out, writes } = recordingOutput();
    const log = stdoutLogStream(out);
    out.destroy();
    log.write('lost\n');
    await nextTurn();
    expect(writes).toEqual([]);
  });

  it('drops the lines past the limit of output waiting for a reader, counting those waiting for the turn to end', async () => {
    // A reader that never reads: everything written stays waiting in the stream.
    const out = new Writable({ write() {} });
    const log = stdoutLogStream(out);
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < (2 * LOG_BUFFER_LIMIT_BYTES) / line.length; i++) log.write(line);
    await nextTurn();
    expect(out.writableLength).toBeGreaterThan(LOG_BUFFER_LIMIT_BYTES - line.length);
    expect(out.writableLength).toBeLessThanOrEqual(LOG_BUFFER_LIMIT_BYTES + line.length);
    const waiting = out.writableLength;
    log.write(line);
    await nextTurn();
    expect(out.writableLength).toBe(waiting);
  });

  it('writes the last lines when the process exits before the turn ends', () => {
    const script = "const { stdoutLogStream } = await import('./src/logging.ts'); const log = stdoutLogStream(); log.write('last words\\n'); process.exit(0);";
    const output = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(output).toBe('last words\n');
  });
});

describe('the request log', () => {
  /** A server logging as Strongroom's does, into `lines`, with a route that logs what it was sent. */
  async function loggingServer() {
    const lines: Record<string, unknown>[] = [];
    const app = Fastify({
      logger: { ...loggerOptions('info'), stream: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) } },
      logController: new OneLinePerRequest(),
    });
    app.post('/echo', async (request) => {
      request.log.info({ body: request.body, headers: request.headers }, 'echo');
      return {};
    });
    await app.ready();
    return { app, lines };
  }

  it('writes each answered request once, as the request logger would, and still redacts what the handlers log', async () => {
    const { app, lines } = await loggingServer();
    for (let i = 0; i < 2; i++) {
      const res = await app.inject({
        method: 'POST',
        url: '/echo?token=secret-in-the-url',
        headers: { authorization: 'Bearer secret-in-a-header' },
        payload: { name: 'kept', password: 'secret-in-the-body', login: { token: 'secret-nested' }, data: { clientId: 'kept', clientSecret: 'secret-of-an-sso-provider' } },
      });
      expect(res.statusCode).toBe(200);
    }
    await app.close();
    const text = JSON.stringify(lines);
    expect(text).not.toMatch(/secret-in|secret-nested|secret-of/);
    const echoed = lines.filter((line) => line.msg === 'echo');
    expect(echoed[0]).toMatchObject({ body: { name: 'kept', password: '[REDACTED]', login: { token: '[REDACTED]' }, data: { clientId: 'kept', clientSecret: '[REDACTED]' } }, headers: { authorization: '[REDACTED]' } });
    const completed = lines.filter((line) => line.msg === 'request completed');
    expect(completed).toHaveLength(2);
    expect(completed[1]).toMatchObject({ level: 30, req: { method: 'POST', url: '/echo?token=[REDACTED]' }, res: { statusCode: 200 } });
    // The same keys in the same order as the handler's line, the request's id among them.
    expect(Object.keys(completed[1] ?? {})).toEqual(['level', 'time', 'pid', 'hostname', 'reqId', 'req', 'res', 'responseTime', 'msg']);
    expect(completed.map((line) => line.reqId)).toEqual(echoed.map((line) => line.reqId));
  });
});

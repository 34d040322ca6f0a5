import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

/** Standard input as operator commands read it: a terminal (raw mode for hidden input) or a pipe. */
export type CommandInput = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

export class InputAborted extends Error {}

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACE = new Set(['\u007f', '\b']);

/**
 * Reads one line from a terminal without echoing it (a password prompt). The prompt goes to
 * `prompt` (standard error), so standard output stays clean for what the command prints.
 * Ctrl-C, Ctrl-D on an empty line, or the end of the input aborts.
 */
export function readHiddenLine(input: CommandInput, prompt: Writable, question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let line = '';
    const finish = (error: Error | null, rest: string) => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
      input.setRawMode?.(false);
      input.pause();
      // A paste can bring the next answer in the same chunk; leave it for the next read.
      if (rest) input.unshift(Buffer.from(rest, 'utf8'));
      prompt.write('\n');
      if (error) reject(error);
      else resolve(line);
    };
    const onData = (chunk: Buffer | string) => {
      const chars = [...(typeof chunk === 'string' ? chunk : decoder.write(chunk))];
      for (let i = 0; i < chars.length; i++) {
        const char = chars[i] ?? '';
        if (char === '\r' || char === '\n') {
          const next = char === '\r' && chars[i + 1] === '\n' ? i + 2 : i + 1;
          return finish(null, chars.slice(next).join(''));
        }
        if (char === CTRL_C || (char === CTRL_D && line === '')) return finish(new InputAborted('Cancelled.'), '');
        if (BACKSPACE.has(char)) line = [...line].slice(0, -1).join('');
        else if (char >= ' ') line += char;
      }
    };
    // A terminal that goes away mid-answer would otherwise leave the promise pending, and the
    // process would end with nothing done and nothing said.
    const onEnd = () => finish(new InputAborted('Standard input closed before an answer.'), '');
    const onError = (error: Error) => finish(new InputAborted(`Cannot read standard input: ${error.message}`), '');
    prompt.write(question);
    input.setRawMode?.(true);
    input.once('end', onEnd);
    input.once('error', onError);
    input.on('data', onData);
    input.resume();
  });
}

/** Reads one visible line from a terminal (a yes/no question). */
export function readLine(input: CommandInput, prompt: Writable, question: string): Promise<string> {
  prompt.write(question);
  return firstLine(input).then((line) => line ?? '');
}

/**
 * The first line of a stream (without its line break), or null when it ends before sending
 * anything. The rest of the stream is left unread.
 */
export function firstLine(input: Readable): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const decoder = new StringDecoder('utf8');
    let text = '';
    let received = false;
    const done = (value: string | null) => {
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('error', onError);
      input.pause();
      resolve(value);
    };
    const onData = (chunk: Buffer | string) => {
      received = true;
      text += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      const end = text.indexOf('\n');
      if (end >= 0) done(text.slice(0, end).replace(/\r$/, ''));
    };
    const onEnd = () => done(received ? (text + decoder.end()).replace(/\r$/, '') : null);
    const onError = (error: Error) => {
      input.off('data', onData);
      input.off('end', onEnd);
      reject(error);
    };
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('error', onError);
    input.resume();
  });
}

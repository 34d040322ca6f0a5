import { Writable } from 'node:stream';

/** A stream that keeps what is written to it, for a command's standard output or error in a test. */
export class TextCapture extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

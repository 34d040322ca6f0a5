import { existsSync } from 'node:fs';
import type { Config } from '../../config/config.js';
import { selfSignedPaths } from '../../tls/self-signed.js';
import { firstLine, readHiddenLine } from '../../shared/terminal-input.js';
import type { CommandIo } from '../users.js';
import { CommandFailure, ExitCode, text, type OptionValues } from '../options.js';

/** The options every command acting as a user takes, for parseArgs. */
export const SESSION_OPTIONS = {
  server: { type: 'string' },
  ca: { type: 'string' },
  code: { type: 'string' },
  'new-device-code': { type: 'string' },
} as const;

export const SESSION_USAGE = `Options of every command that logs in as a user:
  --server <url>          the running server (default: PUBLIC_URL from the settings)
  --ca <file>             the CA (PEM) of its certificate when this machine does not trust it
                          (with TLS_MODE=self-signed, DATA_DIR/tls/ca.pem is used by itself)
  --code <code>           a code from the authenticator app, when two-step login is on
  --new-device-code <c>   the code mailed for new-device verification, when the server asks
The master password is asked at a terminal, or read from the first line of standard input.`;

export interface SessionTarget {
  serverUrl: string;
  caFile?: string;
  twoFactorCode?: string;
  newDeviceCode?: string;
}

/**
 * Where to log in: --server, or this machine's own server (PUBLIC_URL); its self-signed CA is
 * trusted without --ca when the settings say the server made one and the file is here.
 */
export function sessionTarget(values: OptionValues, config: Config): SessionTarget {
  const server = text(values, 'server');
  let caFile = text(values, 'ca');
  if (caFile === undefined && server === undefined && config.tlsMode === 'self-signed') {
    const own = selfSignedPaths(config.dataDir).caPath;
    if (existsSync(own)) caFile = own;
  }
  const code = text(values, 'code');
  if (code !== undefined && !/^\d{6,8}$/.test(code)) throw new CommandFailure(`--code: expected the 6 to 8 digits of an authenticator code, got "${code}".`, ExitCode.Usage);
  const newDeviceCode = text(values, 'new-device-code');
  return {
    serverUrl: server ?? config.publicUrl,
    ...(caFile !== undefined ? { caFile } : {}),
    ...(code !== undefined ? { twoFactorCode: code } : {}),
    ...(newDeviceCode !== undefined ? { newDeviceCode } : {}),
  };
}

/** The master password: asked once at a terminal (it is checked by logging in), else the first line of standard input. */
export async function readMasterPassword(io: CommandIo, email: string): Promise<string> {
  if (io.stdin.isTTY) return readHiddenLine(io.stdin, io.stderr, `Master password of ${email}: `);
  const line = await firstLine(io.stdin);
  if (line === null || line === '') throw new CommandFailure('No password on standard input (its first line is the master password).', ExitCode.Usage);
  return line;
}

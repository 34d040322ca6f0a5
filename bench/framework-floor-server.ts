/**
 * The framework floor for get-by-ids: Fastify with Strongroom's own body validator, parsing and
 * checking a get-by-ids body (`IdsObjectBody`: 1 to 1,000 GUIDs) and answering with the bytes
 * of FILE, on every path. What such a request costs before any of Strongroom's own work
 * (authentication, the database, the audit row), measured beside the bare `http` ceiling
 * (bench/ceiling-server.ts) and Strongroom. Usage: framework-floor-server FILE. Prints its port.
 */
import { readFileSync } from 'node:fs';
import Fastify from 'fastify';
import { IdsObjectBody } from '../src/features/secrets-manager/sm-schemas.js';
import { validatorCompiler } from '../src/http/validation.js';

const body = readFileSync(process.argv[2] ?? '');
const app = Fastify({ logger: false });
app.setValidatorCompiler(validatorCompiler);
app.post('/*', { schema: { body: IdsObjectBody } }, async (_request, reply) => {
  reply.header('content-type', 'application/json; charset=utf-8');
  return body;
});
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
process.stdout.write(`${typeof address === 'object' && address ? address.port : 0}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));

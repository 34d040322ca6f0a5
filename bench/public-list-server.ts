/**
 * The server for bench/rate-limit.ts: the real app (src/app.ts, as src/main.ts builds it) and,
 * while the public API's own routes are not on this branch, a stand-in `GET /api/public/members`
 * behind the organization API-key rule: the organization's members read from the database and
 * listed in the public list envelope. Once the real route exists it is used instead. Not a test.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { buildApp } from '../src/app.js';
import { loadProcessConfig, type Config } from '../src/config/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { access, enforceAccessRules } from '../src/http/access.js';
import { publicErrorHandler } from '../src/http/error-handler.js';
import { createFeatures } from '../src/wiring.js';
import { systemClock } from '../src/clock.js';

const Member = Type.Object({ object: Type.Literal('member'), id: Type.String(), email: Type.Union([Type.String(), Type.Null()]), type: Type.Integer(), status: Type.Integer(), externalId: Type.Union([Type.String(), Type.Null()]) });

async function addStandIn(app: FastifyInstance, config: Config, database: Database): Promise<void> {
  const features = createFeatures({ config, database, clock: systemClock });
  app.addHook('onClose', async () => features.close());
  await app.register(
    async (scope) => {
      scope.setErrorHandler(publicErrorHandler);
      enforceAccessRules(scope, features.authenticate);
      scope.get(
        '/members',
        {
          config: { access: access.organizationApiKey },
          schema: { response: { 200: Type.Object({ object: Type.Literal('list'), data: Type.Array(Member), continuationToken: Type.Null() }) } },
        },
        async (request) => {
          const organizationId = request.principal?.kind === 'organization' ? request.principal.organizationId : '';
          const rows = await database.db
            .selectFrom('organization_users')
            .leftJoin('users', 'users.id', 'organization_users.user_id')
            .select(['organization_users.id', 'organization_users.email', 'users.email as user_email', 'organization_users.type', 'organization_users.status', 'organization_users.external_id'])
            .where('organization_users.organization_id', '=', organizationId)
            .orderBy('organization_users.id')
            .execute();
          const data = rows.map((row) => ({ object: 'member' as const, id: row.id, email: row.user_email ?? row.email, type: row.type, status: row.status, externalId: row.external_id }));
          return { object: 'list' as const, data, continuationToken: null };
        },
      );
    },
    { prefix: '/api/public' },
  );
}

const config = loadProcessConfig();
const database = openDatabase(config.databaseUrl, { poolSize: config.databasePoolSize });
await migrateToLatest(database);
const app = await buildApp({ config, database });
if (!app.hasRoute({ method: 'GET', url: '/api/public/members' })) await addStandIn(app, config, database);
await app.listen({ host: config.host, port: config.port });
app.log.info('Strongroom is ready');
const stop = async () => {
  await app.close();
  await database.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());

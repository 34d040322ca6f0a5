import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import type { Db } from '../../db/database.js';
import type { Authenticator } from '../../http/access.js';
import type { HealthCheck } from '../health/health.service.js';
import { inProcessFanout, redisFanout, type Fanout } from './fanout.js';
import { createHub, type HubLog } from './hub.js';
import type { Push, Pushes } from '../../platform/push/pushes.js';
import { confirmedMemberUserIds } from '../../platform/access/memberships.js';

/**
 * The notifications feature as the rest of the server sees it: `pushes` for the features that
 * change things, `hub` for the notifications service to serve, `health` for /healthz/extended.
 */
export async function createNotifications(deps: { config: Config; db: Db; clock: Clock; authenticate: Authenticator; log: HubLog }) {
  const { config, db } = deps;
  const { log } = deps;
  const hub = createHub({
    settings: {
      keepAliveSeconds: config.notificationsKeepAliveSeconds,
      heartbeatSeconds: config.notificationsHeartbeatSeconds,
      maxConnectionsPerUser: config.notificationsMaxConnectionsPerUser,
      maxConnectionsPerIp: config.notificationsMaxConnectionsPerIp,
      maxBufferedBytes: config.notificationsMaxBufferedKilobytes * 1024,
      trustProxy: config.trustProxy,
    },
    authenticate: deps.authenticate,
    // Every role gets the organization's pushes, as every role claim joins the official hub's group.
    members: (organizationId) => confirmedMemberUserIds(db, organizationId),
    clock: deps.clock,
    log: () => log,
  });
  const deliver = (push: Push) => hub.deliver(push);
  const fanout: Fanout = config.redisUrl ? await redisFanout({ url: config.redisUrl, deliver, log: () => log }) : inProcessFanout(deliver);

  const pushes: Pushes = {
    send(sent: Push | readonly Push[]) {
      const list: readonly Push[] = Array.isArray(sent) ? sent : [sent as Push];
      for (const push of list) {
        try {
          fanout.publish(push);
        } catch (error) {
          log.error({ err: error, pushType: push.type }, 'notifications: a push was dropped');
        }
      }
    },
  };

  const health: HealthCheck = {
    name: 'notifications',
    critical: false,
    async probe() {
      const reason = fanout.degraded();
      if (reason) throw new Error(reason);
      return { fanout: fanout.kind, connections: hub.connectionCount() };
    },
  };

  return {
    pushes,
    hub,
    health,
    async close() {
      await hub.shutdown();
      await fanout.close();
    },
  };
}

export type Notifications = Awaited<ReturnType<typeof createNotifications>>;

export type HealthStatus = 'Healthy' | 'Degraded' | 'Unhealthy';

/** A dependency the server can probe. `critical` ones make the server Unhealthy when down. */
export interface HealthCheck {
  name: string;
  critical: boolean;
  probe(): Promise<Record<string, unknown> | void>;
}

export interface HealthEntry {
  status: HealthStatus;
  description: string | null;
  data: Record<string, unknown>;
}

export interface HealthReport {
  status: HealthStatus;
  results: Record<string, HealthEntry>;
}

const RANK: Record<HealthStatus, number> = { Healthy: 0, Degraded: 1, Unhealthy: 2 };

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function createHealthService({ checks, timeoutMs = 3000 }: { checks: HealthCheck[]; timeoutMs?: number }) {
  return {
    async report(): Promise<HealthReport> {
      const entries = await Promise.all(
        checks.map(async (check): Promise<[string, HealthEntry]> => {
          const started = Date.now();
          try {
            const data = (await withTimeout(check.probe(), timeoutMs)) ?? {};
            return [check.name, { status: 'Healthy', description: null, data: { ...data, durationMs: Date.now() - started } }];
          } catch (error) {
            return [
              check.name,
              {
                status: check.critical ? 'Unhealthy' : 'Degraded',
                description: error instanceof Error ? error.message : String(error),
                data: { durationMs: Date.now() - started },
              },
            ];
          }
        }),
      );
      const status = entries.reduce<HealthStatus>((worst, [, e]) => (RANK[e.status] > RANK[worst] ? e.status : worst), 'Healthy');
      return { status, results: Object.fromEntries(entries) };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;

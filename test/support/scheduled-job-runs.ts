/** Runs of the Send purge an instance counted, from its /metrics text (strongroom_scheduled_job_runs_total). */
export function purgeRunsIn(metrics: string): { ran: number; skipped: number } {
  const count = (result: string) => Number(new RegExp(`^strongroom_scheduled_job_runs_total\\{job="send-purge",result="${result}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  return { ran: count('ran'), skipped: count('skipped') };
}

/** Runs of any scheduled job (its `job` label on /metrics) an instance counted, from its /metrics text. */
export function jobRunsIn(metrics: string, job: string): { ran: number; skipped: number } {
  const count = (result: string) => Number(new RegExp(`^strongroom_scheduled_job_runs_total\\{job="${job}",result="${result}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  return { ran: count('ran'), skipped: count('skipped') };
}

# How long the job is down while ECS replaces the JobManager (a deployment at minimum 0 % and
# maximum 100 %, a failed health check, a Fargate retirement), as a budget of its parts, and how
# much longer it can take at worst. taskmanager.registration.timeout is set from the budget, the
# "job not running" alarm from the worst case; the README's "JobManager replacement on Fargate"
# gives each part's source.

locals {
  # 'snapshots submit' waits until the newest checkpoint has stayed the newest for three checkpoint
  # intervals, at least 10 s (JobLifecycle.settledRetained): another JobManager may still run it.
  submit_quiet_wait_seconds = max(3 * var.checkpoint_interval_seconds, 10)
  jobmanager_replacement_parts = merge(var.jobmanager_replacement_seconds, {
    quiet_wait = local.submit_quiet_wait_seconds
  })
  jobmanager_replacement_budget_seconds = sum(values(local.jobmanager_replacement_parts))
  # Where a part can run past its budget, by how much at worst:
  # - the old task's stop: ECS sends SIGKILL after stopTimeout, whatever 'release' still waits for;
  # - Cloud Map: a TaskManager's JVM caches a resolved name for 30 s (networkaddress.cache.ttl, the
  #   JDK's default without a security manager), after the record's own TTL.
  # The Fargate parts (task start, image pull) have no published bound; the slowest figures
  # published for them fit their budgets (README), so they add nothing here.
  jobmanager_replacement_overrun_seconds = {
    old_jobmanager_stop = max(0, var.stop_timeout_seconds - local.jobmanager_replacement_parts.old_jobmanager_stop)
    service_discovery   = 30
  }
  jobmanager_replacement_worst_seconds = local.jobmanager_replacement_budget_seconds + sum(values(local.jobmanager_replacement_overrun_seconds))
  # The alarm waits out the worst case, plus a minute for the first datapoint of the new
  # JobManager's metrics sidecar (it scrapes every 30 s).
  job_down_alarm_minutes = coalesce(var.job_down_alarm_minutes, ceil(local.jobmanager_replacement_worst_seconds / 60) + 1)
  # A TaskManager without a JobManager for this long exits (taskmanager.registration.timeout).
  taskmanager_registration_timeout_seconds = 2 * local.jobmanager_replacement_budget_seconds
}

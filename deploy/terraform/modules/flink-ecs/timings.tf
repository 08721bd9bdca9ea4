# How long the job is down while ECS replaces the JobManager (a deployment at minimum 0 % and
# maximum 100 %, a failed health check, a Fargate retirement), as a budget of its parts. The
# "job not running" alarm and taskmanager.registration.timeout are set from it; the README's
# "JobManager replacement on Fargate" gives each part's source.

locals {
  # 'snapshots submit' waits until the newest checkpoint has stayed the newest for three checkpoint
  # intervals, at least 10 s (JobLifecycle.settledRetained): another JobManager may still run it.
  submit_quiet_wait_seconds = max(3 * var.checkpoint_interval_seconds, 10)
  jobmanager_replacement_parts = merge(var.jobmanager_replacement_seconds, {
    quiet_wait = local.submit_quiet_wait_seconds
  })
  jobmanager_replacement_budget_seconds = sum(values(local.jobmanager_replacement_parts))
  # The alarm waits out a routine replacement, plus a minute for the first datapoint of the new
  # JobManager's metrics sidecar (it scrapes every 30 s).
  job_down_alarm_minutes = coalesce(var.job_down_alarm_minutes, ceil(local.jobmanager_replacement_budget_seconds / 60) + 1)
  # A TaskManager without a JobManager for this long exits (taskmanager.registration.timeout).
  taskmanager_registration_timeout_seconds = 2 * local.jobmanager_replacement_budget_seconds
}

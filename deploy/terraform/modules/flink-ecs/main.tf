# Flink on ECS Fargate for the snapshot job: a JobManager service (one task) that submits or
# resumes the job at start, and a TaskManager service (N tasks plus spares), found through Cloud Map.
# The stream, the bucket and the ECS cluster are created here unless existing ones are given
# (existing_stream_arn, existing_bucket, existing_cluster_name): a replay of job version N+1 runs
# as a second instance of this module beside version N's, on N's stream, bucket and cluster.

locals {
  create_stream  = var.existing_stream_arn == ""
  create_bucket  = var.existing_bucket == ""
  create_cluster = var.existing_cluster_name == ""
  stream_arn     = local.create_stream ? aws_kinesis_stream.events[0].arn : var.existing_stream_arn
  # arn:aws:kinesis:REGION:ACCOUNT:stream/NAME
  stream_name  = local.create_stream ? aws_kinesis_stream.events[0].name : element(split("/", var.existing_stream_arn), 1)
  bucket       = local.create_bucket ? aws_s3_bucket.snapshots[0].bucket : var.existing_bucket
  bucket_arn   = "arn:${data.aws_partition.current.partition}:s3:::${local.bucket}"
  cluster_name = local.create_cluster ? aws_ecs_cluster.this[0].name : var.existing_cluster_name
  cluster_arn  = "arn:${data.aws_partition.current.partition}:ecs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:cluster/${local.cluster_name}"

  store_uri       = "s3://${local.bucket}/${trimsuffix(var.snapshot_prefix, "/")}"
  jobmanager_host = "jobmanager.${aws_service_discovery_private_dns_namespace.this.name}"
  jobmanager_rest = "${local.rest_tls ? "https" : "http"}://${local.jobmanager_host}:8081"
  alarm_topic_arn = local.create_topic ? aws_sns_topic.alarms[0].arn : var.alarm_topic_arn
  # A staged part's durable copy must outlive the longest outage the job can recover from: the
  # stream's retention (beyond it the unread records are gone anyway), plus a day.
  staging_retention_days = ceil(var.kinesis_retention_hours / 24) + 1

  # Where every JobManager incarnation keeps its checkpoints: the image's entrypoint sets
  # state.checkpoints.dir to "$SNAPSHOTS_CHECKPOINT_BASE/jm-<incarnation>", so a JobManager never
  # subsumes (deletes) checkpoints another one wrote, and 'snapshots submit' resumes from the newest
  # retained checkpoint under any incarnation.
  checkpoint_base = "s3://${local.bucket}/${var.checkpoint_prefix}checkpoints"
  # The job's parallelism: the slots of the TaskManagers it needs, never the spares'.
  job_parallelism = var.taskmanager_count * var.taskmanager_slots
  # Without it a command-line JVM sizes its heap from the task's memory, not from cli_memory.
  cli_java_options = "-Xmx${var.cli_heap_mb}m"
  # The job's own flags; SNAPSHOTS_JOB_ARGS of the JobManager, and what an operator's command names.
  # A jar of one's own gets its own arguments after '--'; the flags before name what its sink writes.
  job_args = (var.job_jar == ""
    ? "--source kinesis --stream-arn ${local.stream_arn} --store ${local.store_uri} --region ${data.aws_region.current.name} --pipeline ${var.pipeline} --job-version ${var.job_version} --checkpoint-interval ${var.checkpoint_interval_seconds}s --shard-poll-interval ${var.shard_poll_interval_ms}ms ${var.job_args}"
  : "--store ${local.store_uri} --region ${data.aws_region.current.name} --pipeline ${var.pipeline} --job-version ${var.job_version} --checkpoint-interval ${var.checkpoint_interval_seconds}s -- ${var.job_args}")

  # Memory of each task that Flink must leave to others: the metrics sidecar, the protect sidecar
  # (TaskManagers), and the 'snapshots submit' JVM inside the JobManager container. The rest, less
  # a margin for the entrypoint's shell and the health checks, is Flink's process size.
  container_margin_mb = 128
  sidecar_memory = {
    jobmanager  = var.cli_memory + (var.metrics ? var.metrics_agent_memory : 0)
    taskmanager = (var.scale_in_protection ? var.cli_memory : 0) + (var.metrics ? var.metrics_agent_memory : 0)
  }
  flink_process_memory = {
    jobmanager  = var.jobmanager_memory - local.sidecar_memory.jobmanager - local.container_margin_mb
    taskmanager = var.taskmanager_memory - local.sidecar_memory.taskmanager - local.container_margin_mb
  }

  # FLINK_PROPERTIES: the official image's entrypoint strips all whitespace from each line and turns
  # every line into a setting (comments too), so these stay one "key: value" each, without spaces,
  # and no key is a prefix of another.
  flink_common_properties = [
    "jobmanager.rpc.address: ${local.jobmanager_host}",
    "jobmanager.rpc.port: ${local.ports.jobmanager_rpc}",
    "blob.server.port: ${local.ports.blob}",
    "taskmanager.rpc.port: ${local.ports.taskmanager_rpc}",
    "taskmanager.data.port: ${local.ports.data}",
    # Fixed, so the security group can open it: the JobManager asks every TaskManager's query
    # service for the per-task metrics the web UI and REST API show (random by default, and then
    # blocked, so those metrics stay empty).
    "metrics.internal.query-service.port: ${local.ports.metrics_query}",
    "taskmanager.numberOfTaskSlots: ${var.taskmanager_slots}",
    "parallelism.default: ${local.job_parallelism}",
    "state.savepoints.dir: s3://${local.bucket}/${var.checkpoint_prefix}savepoints",
    "state.checkpoints.num-retained: ${var.retained_checkpoints}",
    # Without ZooKeeper the JobManager resumes from retained checkpoints: keep them on cancel.
    "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION",
    "heartbeat.interval: 2000",
    "heartbeat.timeout: 15000",
    # A TaskManager that has not registered with a JobManager for this long exits. A JobManager
    # replacement (README, "JobManager replacement on Fargate") leaves them without one for up to
    # its whole budget: twice that, so a routine deploy never costs every TaskManager.
    "taskmanager.registration.timeout: ${local.taskmanager_registration_timeout_seconds}s",
    "restart-strategy.type: exponential-delay",
    # flink-s3-fs-presto (checkpoints, savepoints) defaults to EC2 instance credentials
    # (presto.s3.use-instance-credentials, which Flink mirrors from s3.*); Fargate has no instance
    # metadata. Off, it uses the AWS SDK's default chain, which reads the task role from the
    # container credentials endpoint (AWS_CONTAINER_CREDENTIALS_RELATIVE_URI).
    "s3.use-instance-credentials: false",
    # The regional endpoint (the presto filesystem's default is the global s3.amazonaws.com, which
    # redirects requests for buckets outside us-east-1). Set as presto.s3.endpoint, not s3.endpoint:
    # 'snapshots submit' reads s3.endpoint from the JobManager as a local S3 server's address and
    # would then address AWS path-style; its own client takes the region from AWS_REGION.
    "presto.s3.endpoint: https://s3.${data.aws_region.current.name}.${data.aws_partition.current.dns_suffix}",
    # Flink's Prometheus reporter, a plugin the official image ships in plugins/metrics-prometheus;
    # the metrics sidecar scrapes it on localhost only (the security group does not open 9249).
    "metrics.reporter.prom.factory.class: org.apache.flink.metrics.prometheus.PrometheusReporterFactory",
    "metrics.reporter.prom.port: 9249",
    # The image's plugin snapshots-warmup: each process makes the checkpoints' S3 file system as it
    # starts, so a TaskManager replacing a lost one does not make it while all its tasks wait.
    "metrics.reporter.warmup.factory.class: dev.snapshots.warmup.FileSystemWarmUpFactory",
    "metrics.reporter.warmup.uri: ${local.checkpoint_base}",
  ]
  # No state.checkpoints.dir: the entrypoint derives it from SNAPSHOTS_CHECKPOINT_BASE per
  # incarnation, and a second definition here could win over it.
  flink_jobmanager_properties = [
    "jobmanager.memory.process.size: ${local.flink_process_memory.jobmanager}m",
  ]
  flink_taskmanager_properties = [
    # The job compiled on the JobManager carries the incarnation's directory to the TaskManagers;
    # this is only their fallback, so they never fall back to the JobManager's memory instead.
    "state.checkpoints.dir: ${local.checkpoint_base}",
    "taskmanager.memory.process.size: ${local.flink_process_memory.taskmanager}m",
    # The job keeps its state on the heap (HashMapStateBackend): managed memory would be unused.
    "taskmanager.memory.managed.size: 0",
    # Throughput over pause times: ParallelGC ran the pipeline 9-15 % faster than G1 (docs/BENCHMARKS.md).
    "env.java.opts.taskmanager: -XX:+UseParallelGC",
  ]
  flink_properties = {
    jobmanager  = join("\n", concat(local.flink_common_properties, local.rest_tls_properties, local.flink_jobmanager_properties))
    taskmanager = join("\n", concat(local.flink_common_properties, local.rest_tls_properties, local.flink_taskmanager_properties))
  }
}

data "aws_region" "current" {}
data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

resource "aws_ecs_cluster" "this" {
  count = local.create_cluster ? 1 : 0
  name  = var.name
  setting {
    name  = "containerInsights"
    value = "enabled"
  }
  # Every ECS Exec session is logged (exec.tf). A cluster given by existing_cluster_name keeps its
  # owner's configuration.
  dynamic "configuration" {
    for_each = var.execute_command ? [1] : []
    content {
      execute_command_configuration {
        kms_key_id = var.kms_key_arn != "" ? var.kms_key_arn : null
        logging    = "OVERRIDE"
        log_configuration {
          cloud_watch_log_group_name = local.exec_log_group.name
          # Needs the log group under a customer-managed key.
          cloud_watch_encryption_enabled = var.kms_key_arn != ""
          s3_bucket_name                 = local.exec_log_s3 ? var.exec_log_bucket : null
          s3_key_prefix                  = local.exec_log_s3 ? local.exec_s3_prefix : null
          s3_bucket_encryption_enabled   = local.exec_log_s3 ? true : null
        }
      }
    }
  }
  tags = var.tags
}

resource "aws_service_discovery_private_dns_namespace" "this" {
  name = "${var.name}.internal"
  vpc  = var.vpc_id
  tags = var.tags
}

resource "aws_service_discovery_service" "jobmanager" {
  name = "jobmanager"
  dns_config {
    namespace_id   = aws_service_discovery_private_dns_namespace.this.id
    routing_policy = "MULTIVALUE"
    dns_records {
      ttl  = 10
      type = "A"
    }
  }
  health_check_custom_config {
    failure_threshold = 1
  }
}

locals {
  ports = {
    data            = 6121
    taskmanager_rpc = 6122
    jobmanager_rpc  = 6123
    blob            = 6124
    metrics_query   = 6125
    rest            = 8081
  }
}

# Members talk to each other on Flink's ports, nothing else comes in. 8081 is Flink's REST API,
# which runs any jar uploaded to it with the task role: it is open to the cluster's own tasks (the
# lifecycle operator task among them) and, only if given, to the security groups in
# operator_security_group_ids, never to an address range. Every rule is a rule resource of its own
# (no inline blocks, which would fight them); a group without inline rules has no egress but its
# rules (the provider removes AWS's default allow-all).
resource "aws_security_group" "flink" {
  name        = "${var.name}-flink"
  description = "JobManager, TaskManagers and operator tasks talk to each other; nothing else comes in."
  vpc_id      = var.vpc_id
  tags        = var.tags
}

resource "aws_vpc_security_group_ingress_rule" "flink" {
  for_each                     = local.ports
  security_group_id            = aws_security_group.flink.id
  description                  = "Flink ${each.key} between the tasks of this cluster"
  referenced_security_group_id = aws_security_group.flink.id
  from_port                    = each.value
  to_port                      = each.value
  ip_protocol                  = "tcp"
  tags                         = var.tags
}

resource "aws_vpc_security_group_egress_rule" "flink" {
  for_each                     = local.ports
  security_group_id            = aws_security_group.flink.id
  description                  = "Flink ${each.key} between the tasks of this cluster"
  referenced_security_group_id = aws_security_group.flink.id
  from_port                    = each.value
  to_port                      = each.value
  ip_protocol                  = "tcp"
  tags                         = var.tags
}

# The read-only operator task reaches AWS and nothing of the cluster: no rule of the cluster's group
# admits it.
resource "aws_security_group" "operator_read" {
  name        = "${var.name}-operator-read"
  description = "The read-only operator task (audit, inspect, ddl): HTTPS to AWS only."
  vpc_id      = var.vpc_id
  tags        = var.tags
}

locals {
  # The tasks reach AWS (S3, Kinesis, ECR, CloudWatch Logs, ECS, Secrets Manager, STS) over HTTPS
  # only: to egress_https_cidr_blocks (the world by default; a VPC's CIDR where interface endpoints
  # serve them) and egress_https_prefix_list_ids (an S3 gateway endpoint's prefix list). DNS and the
  # ECS agent's and task metadata endpoints are not subject to security groups. Keyed by position,
  # so a prefix list id known only after apply can be one.
  https_destinations = merge(
    { for i, cidr in var.egress_https_cidr_blocks : "cidr-${i}" => { cidr_ipv4 = cidr, prefix_list_id = null } },
    { for i, id in var.egress_https_prefix_list_ids : "prefix-list-${i}" => { cidr_ipv4 = null, prefix_list_id = id } },
  )
  https_egress = { for pair in setproduct(["flink", "operator_read"], keys(local.https_destinations)) :
    "${pair[0]}/${pair[1]}" => merge(local.https_destinations[pair[1]], { group = pair[0] })
  }
}

resource "aws_vpc_security_group_egress_rule" "https" {
  for_each          = local.https_egress
  security_group_id = each.value.group == "flink" ? aws_security_group.flink.id : aws_security_group.operator_read.id
  description       = "HTTPS to AWS APIs (directly, through VPC endpoints or a NAT gateway)"
  cidr_ipv4         = each.value.cidr_ipv4
  prefix_list_id    = each.value.prefix_list_id
  from_port         = 443
  to_port           = 443
  ip_protocol       = "tcp"
  tags              = var.tags
}

# Opt-in: a bastion's or a VPN's security group may reach the REST API and web UI. Whoever is in
# it can run code as the job (upload a jar) and cancel the job; prefer the operator task.
resource "aws_vpc_security_group_ingress_rule" "operator_rest" {
  for_each                     = toset(var.operator_security_group_ids)
  security_group_id            = aws_security_group.flink.id
  description                  = "Flink REST API and web UI from an operator's security group (runs uploaded jars as the job)"
  referenced_security_group_id = each.value
  from_port                    = local.ports.rest
  to_port                      = local.ports.rest
  ip_protocol                  = "tcp"
  tags                         = var.tags
}

locals {
  log_configuration = { for role, group in {
    jobmanager  = "jobmanager"
    taskmanager = "taskmanager"
    protect     = "taskmanager"
    metrics     = "metrics"
    } : role => {
    logDriver = "awslogs"
    options = {
      awslogs-group         = aws_cloudwatch_log_group.flink[group].name
      awslogs-region        = data.aws_region.current.name
      awslogs-stream-prefix = role
    }
  } }
  health_check_timing = { interval = 15, timeout = 5, retries = 4, startPeriod = 60 }
  # A sidecar that dies is started again in place, without replacing the task; one that has not
  # run for restartAttemptPeriod seconds is left stopped (ECS' rule), so a crash loop stays visible.
  sidecar_restart_policy = { enabled = true, restartAttemptPeriod = 60 }

  # The CloudWatch agent scrapes Flink's Prometheus reporter in its own task and publishes the
  # metrics the alarms use as CloudWatch metrics (embedded metric format in the metrics log group).
  # Labels become dimensions; the only one used is the static 'cluster', so the datapoints of every
  # task (and every subtask) land in one series per metric. StatsD was not used: its names carry
  # Flink's operator names, which contain spaces, and the agent's StatsD parser cuts names at the
  # first space; and equal names from two subtasks in one TaskManager overwrite each other there.
  prometheus_scrape_config = yamlencode({
    # Twice a minute, so every one-minute period of the alarms has a datapoint.
    global = { scrape_interval = "30s", scrape_timeout = "10s" }
    scrape_configs = [{
      job_name       = "flink"
      static_configs = [{ targets = ["localhost:9249"], labels = { cluster = var.name } }]
      metric_relabel_configs = [
        {
          source_labels = ["__name__", "operator_name"]
          regex         = "flink_taskmanager_job_task_operator_numRecordsInPerSecond;${local.dead_letter_assembler}"
          target_label  = "__name__"
          replacement   = local.dead_letter_rate_metric
          action        = "replace"
        },
        # Only what the alarms and the dashboards read is kept: Flink exposes hundreds of series.
        {
          source_labels = ["__name__"]
          regex         = join("|", local.exported_metrics)
          action        = "keep"
        },
      ]
    }]
  })
  metric_namespace = "Snapshots/${var.name}"
  # Flink's Prometheus reporter names a metric "flink_" + its group's logical scope ("jobmanager.job",
  # "taskmanager.job.task.operator", ...) with "_" for "." + "_" + the metric's name.
  flink_metrics = {
    # Milliseconds since the job became RUNNING; 0 in any other state (metrics.job.status.enable's
    # default, CURRENT_TIME).
    running_time = "flink_jobmanager_job_runningTime"
    restarts     = "flink_jobmanager_job_numRestarts"
    # Checkpoint ids carry on from the restored checkpoint, so unlike numberOfCompletedCheckpoints
    # this one does not fall back to 0 when a new JobManager resumes the job; it reads -1 only
    # until the new JobManager's first checkpoint completes (FirstDeployAlarmsITCase measures it).
    last_checkpoint_id  = "flink_jobmanager_job_lastCompletedCheckpointId"
    checkpoint_failures = "flink_jobmanager_job_numberOfFailedCheckpoints"
    checkpoint_duration = "flink_jobmanager_job_lastCheckpointDuration"
    # The sink's committer counters, for dashboards: each counts since its subtask (re)started,
    # and all subtasks' datapoints share one series (alarms.tf says why collapses are alarmed on
    # from the committer's log instead).
    parts_created   = "flink_taskmanager_job_task_operator_partsCreated"
    parts_collapsed = "flink_taskmanager_job_task_operator_partsCollapsed"
    parts_divergent = "flink_taskmanager_job_task_operator_partsDivergent"
    store_retries   = "flink_taskmanager_job_task_operator_storeRetries"
    heap_used       = "flink_taskmanager_Status_JVM_Memory_Heap_Used"
    # The Kinesis source's readers: how far behind the shard's tip their last GetRecords was, the
    # largest over the reader's shards (this job's own view of the stream).
    millis_behind_latest = "flink_taskmanager_job_task_operator_millisBehindLatest"
    # The completion pointer's operator: the end of the last window whose parts are all published.
    complete_through = "flink_taskmanager_job_task_operator_completeThroughMillis"
  }
  # Every operator has a numRecordsInPerSecond; the dead letters' assembler's (operator
  # 'dead-letter-parts', which every dead letter passes) is the dead-letter rate, kept under a name
  # of its own so that one series holds it.
  dead_letter_assembler   = "dead-letter-parts"
  dead_letter_rate_metric = "snapshots_deadLetters_perSecond"
  exported_metrics        = concat(values(local.flink_metrics), [local.dead_letter_rate_metric])
  cloudwatch_agent_config = jsonencode({
    # Fargate has no instance metadata to take the region from.
    agent = { region = data.aws_region.current.name }
    logs = {
      force_flush_interval = 15
      metrics_collected = {
        prometheus = {
          cluster_name           = var.name
          log_group_name         = aws_cloudwatch_log_group.flink["metrics"].name
          prometheus_config_path = "env:PROMETHEUS_CONFIG_CONTENT"
          emf_processor = {
            metric_namespace         = local.metric_namespace
            metric_declaration_dedup = true
            metric_declaration = [{
              source_labels    = ["job"]
              label_matcher    = "^flink$"
              dimensions       = [["cluster"]]
              metric_selectors = [for m in local.exported_metrics : "^${m}$"]
            }]
          }
        }
      }
    }
  })
  metrics_container = {
    name             = "metrics"
    image            = var.cloudwatch_agent_image
    essential        = false
    memory           = var.metrics_agent_memory
    restartPolicy    = local.sidecar_restart_policy
    logConfiguration = local.log_configuration.metrics
    environment = [
      { name = "AWS_REGION", value = data.aws_region.current.name },
      { name = "CW_CONFIG_CONTENT", value = local.cloudwatch_agent_config },
      { name = "PROMETHEUS_CONFIG_CONTENT", value = local.prometheus_scrape_config },
    ]
  }

  # The image's entrypoint (deploy/docker/Dockerfile), which the REST TLS prelude runs after it.
  image_entrypoint = "/opt/flink/bin/snapshots-entrypoint.sh"
  # Attributes a container has only when they say something (ECS drops empty ones, and the plan
  # would show a change on every run).
  jobmanager_extras = { for k, v in {
    entryPoint = local.rest_tls ? concat(local.rest_tls_entry_point, [local.image_entrypoint]) : []
    secrets    = local.jobmanager_secrets
  } : k => v if length(v) > 0 }

  jobmanager_container = {
    name      = "jobmanager"
    image     = var.image
    essential = true
    command   = ["jobmanager"]
    environment = concat([
      { name = "AWS_REGION", value = data.aws_region.current.name },
      { name = "FLINK_PROPERTIES", value = local.flink_properties.jobmanager },
      { name = "SNAPSHOTS_CHECKPOINT_BASE", value = local.checkpoint_base },
      # For 'snapshots submit', which runs beside the JobManager in this container. HotSpot reads
      # it in every JVM, but the JobManager's own -Xmx (from its process size) comes later on its
      # command line and wins.
      { name = "JAVA_TOOL_OPTIONS", value = local.cli_java_options },
      ],
      # Where a new job version starts while it has no checkpoint of its own (the entrypoint's
      # 'submit --from-savepoint'); ignored once it has, so it may stay set after the bump. Left
      # out when empty: ECS drops empty values, and the plan would show a change on every run.
      var.from_savepoint == "" ? [] : [{ name = "SNAPSHOTS_FROM_SAVEPOINT", value = var.from_savepoint }],
      local.program_environment,
    )
    portMappings = [for p in [local.ports.jobmanager_rpc, local.ports.blob, local.ports.rest] : { containerPort = p, protocol = "tcp" }]
    # Stop-with-savepoint and a clean shutdown need time after SIGTERM.
    stopTimeout = var.stop_timeout_seconds
    # Over TLS with mutual authentication an HTTP probe would need the client key: the port then.
    healthCheck = merge(local.health_check_timing, { command = ["CMD-SHELL", local.rest_tls
      ? "bash -c '</dev/tcp/127.0.0.1/8081' || exit 1"
    : "curl -sf http://localhost:8081/overview || exit 1"] })
    logConfiguration = local.log_configuration.jobmanager
  }

  taskmanager_container = {
    name      = "taskmanager"
    image     = var.image
    essential = true
    command   = ["taskmanager"]
    environment = [
      { name = "AWS_REGION", value = data.aws_region.current.name },
      { name = "FLINK_PROPERTIES", value = local.flink_properties.taskmanager },
    ]
    stopTimeout      = var.stop_timeout_seconds
    healthCheck      = merge(local.health_check_timing, { command = ["CMD-SHELL", "bash -c '</dev/tcp/127.0.0.1/6122' || exit 1"] })
    logConfiguration = local.log_configuration.taskmanager
  }

  # Keeps scale-in protection on while the job runs; checkpoints and lets go when ECS wants the
  # task. Not essential (the TaskManager must not die with it), and restarted in place whenever it
  # exits, a let-go (exit 0) included: a task ECS then does not stop (a deployment rolled back, a
  # scale-in called off) must not run on unprotected for the rest of its life. A let-go within
  # restartAttemptPeriod of its start is not restarted (ECS' rule), which ends a let-go loop.
  # Each start draws its stretch of protection between 6 and 10 minutes (the command line's
  # default is 10): TaskManagers that started together (a job's start, a rollout) hand over at
  # different times, so a waiting deployment takes them one by one rather than all at once.
  protect_command = "exec ${join(" ", [for a in local.cli_entry_point : "'${a}'"])} protect --rest \"$SNAPSHOTS_REST\" --max-protected-minutes $((6 + RANDOM % 5))"
  protect_extras = { for k, v in {
    entryPoint = local.rest_tls ? concat(local.rest_tls_entry_point, local.protect_container.entryPoint) : []
    secrets    = local.rest_tls_secrets
  } : k => v if length(v) > 0 }
  protect_container = {
    name          = "protect"
    image         = var.image
    essential     = false
    entryPoint    = ["bash", "-c", local.protect_command]
    memory        = var.cli_memory
    restartPolicy = local.sidecar_restart_policy
    environment = [
      { name = "AWS_REGION", value = data.aws_region.current.name },
      { name = "SNAPSHOTS_REST", value = local.jobmanager_rest },
      { name = "JAVA_TOOL_OPTIONS", value = local.cli_java_options },
    ]
    stopTimeout      = var.stop_timeout_seconds
    logConfiguration = local.log_configuration.protect
    # ECS stops a container before the containers it depends on: on a task's stop, this sidecar
    # gets its SIGTERM first, and the TaskManager only once the sidecar has exited, so the
    # checkpoint the sidecar asks for completes while the TaskManager still runs.
    dependsOn = [{ containerName = local.taskmanager_container.name, condition = "START" }]
  }

  containers = {
    jobmanager  = concat([merge(local.jobmanager_container, local.jobmanager_extras)], var.metrics ? [local.metrics_container] : [])
    taskmanager = concat([local.taskmanager_container], var.scale_in_protection ? [merge(local.protect_container, local.protect_extras)] : [], var.metrics ? [local.metrics_container] : [])
  }

  # The JobManager service never runs two JobManagers by plan: a deployment stops the old task
  # before it starts the new one (two would each run the job under the same fixed job id). The
  # TaskManagers start their replacements first, and spares keep the job's slots free to restart in.
  task_roles = { jobmanager = "jm", taskmanager = "tm" }
  tasks = {
    jobmanager = {
      cpu        = var.jobmanager_cpu
      memory     = var.jobmanager_memory
      count      = 1
      deployment = { minimum_healthy_percent = 0, maximum_percent = 100 }
    }
    taskmanager = {
      cpu        = var.taskmanager_cpu
      memory     = var.taskmanager_memory
      count      = var.taskmanager_count + var.spare_taskmanagers
      deployment = { minimum_healthy_percent = 100, maximum_percent = 200 }
    }
  }
}

resource "aws_ecs_task_definition" "flink" {
  for_each                 = local.tasks
  family                   = "${var.name}-${each.key}"
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = each.value.cpu
  memory                   = each.value.memory
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.task[local.task_roles[each.key]].arn
  container_definitions    = jsonencode(local.containers[each.key])
  tags                     = var.tags

  lifecycle {
    precondition {
      condition     = local.flink_process_memory[each.key] >= 1024
      error_message = "The ${each.key} task leaves Flink ${local.flink_process_memory[each.key]} MiB after its sidecars; give the task more memory (at least 1024 MiB for Flink)."
    }
    precondition {
      condition     = local.container_definitions_bytes[each.key] <= 65536
      error_message = "The ${each.key} task definition's containers come to ${local.container_definitions_bytes[each.key]} bytes, over the 65536 (64 KiB) ECS accepts for a task definition. A long SQL script belongs in Secrets Manager: put it in a secret, set sql_script_secret_arn to its ARN and leave sql_script empty (ECS then reads it into SNAPSHOTS_SQL when the task starts)."
    }
    # The module's operations (outputs, the operator task, alarms) name its pipeline, version and
    # store: a script that writes elsewhere would run unwatched.
    precondition {
      condition = nonsensitive(var.sql_script == "" || alltrue([
        for option in ["'pipeline'\\s*=\\s*'${var.pipeline}'", "'job-version'\\s*=\\s*'${var.job_version}'", "'store'\\s*=\\s*'${local.store_uri}"] :
        can(regex(option, var.sql_script))
      ]))
      error_message = "sql_script's canonical-snapshots table must set 'pipeline' = '${var.pipeline}', 'job-version' = '${var.job_version}' and a 'store' under ${local.store_uri}."
    }
  }
}

resource "aws_ecs_service" "flink" {
  for_each        = local.tasks
  name            = "${var.name}-${each.key}"
  cluster         = local.cluster_arn
  task_definition = aws_ecs_task_definition.flink[each.key].arn
  desired_count   = each.value.count
  launch_type     = "FARGATE"
  # Container restart policies need Fargate platform 1.4.0 or later.
  platform_version                   = "LATEST"
  deployment_minimum_healthy_percent = each.value.deployment.minimum_healthy_percent
  deployment_maximum_percent         = each.value.deployment.maximum_percent
  deployment_circuit_breaker {
    enable   = true
    rollback = true
  }
  network_configuration {
    subnets          = var.subnet_ids
    security_groups  = [aws_security_group.flink.id]
    assign_public_ip = false
  }
  # TaskManagers find the JobManager by name through Cloud Map.
  dynamic "service_registries" {
    for_each = each.key == "jobmanager" ? [aws_service_discovery_service.jobmanager.arn] : []
    content {
      registry_arn = service_registries.value
    }
  }
  # ECS Exec into a running task (aws ecs execute-command, output exec_command).
  enable_execute_command = var.execute_command
  # The service tag reaches the tasks: rights on one service's tasks name it (iam.tf).
  propagate_tags = "SERVICE"
  tags           = merge(var.tags, { (local.service_tag) = local.service_names[each.key] })
  # A task started before its roles have their policies fails its first calls.
  depends_on = [aws_iam_role_policy.task, aws_iam_role_policy_attachment.execution, aws_iam_role_policy.execution, terraform_data.network_ready]
}

# What the caller says the tasks' way out needs; the services wait for it.
resource "terraform_data" "network_ready" {
  input = var.network_ready
}

resource "aws_cloudwatch_log_group" "flink" {
  for_each          = toset(concat(["jobmanager", "taskmanager", "metrics"], var.execute_command ? ["exec"] : []))
  name              = "/ecs/${var.name}/${each.key}"
  retention_in_days = var.log_retention_days
  # CloudWatch Logs encrypts every log group; with kms_key_arn, under that key.
  kms_key_id = var.kms_key_arn != "" ? var.kms_key_arn : null
  tags       = var.tags
}

resource "aws_kinesis_stream" "events" {
  count            = local.create_stream ? 1 : 0
  name             = "${var.name}-events"
  shard_count      = var.kinesis_shard_count
  retention_period = var.kinesis_retention_hours
  encryption_type  = "KMS"
  kms_key_id       = var.kms_key_arn != "" ? var.kms_key_arn : "alias/aws/kinesis"
  stream_mode_details {
    stream_mode = "PROVISIONED"
  }
  tags = var.tags
}

# The stream and the cluster gained a count (existing_stream_arn, existing_cluster_name).
moved {
  from = aws_kinesis_stream.events
  to   = aws_kinesis_stream.events[0]
}
moved {
  from = aws_ecs_cluster.this
  to   = aws_ecs_cluster.this[0]
}

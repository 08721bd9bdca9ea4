variable "name" {
  description = "Prefix of every resource name, e.g. \"telemetry-snapshots\"."
  type        = string
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{1,30}$", var.name))
    error_message = "name must be 2-31 lowercase letters, digits and dashes, starting with a letter."
  }
}

variable "vpc_id" {
  description = "VPC the tasks run in."
  type        = string
}

variable "subnet_ids" {
  description = "Private subnets for the tasks (with a NAT gateway or VPC endpoints for S3, Kinesis, ECR, CloudWatch Logs)."
  type        = list(string)
}

variable "image" {
  description = "The job's image (deploy/docker/Dockerfile), e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/snapshots-job:1.4.0."
  type        = string
}

variable "job_args" {
  description = "Extra job flags (snapshots run --help), e.g. \"--buckets 4\"; --source, --stream-arn, --store, --region, --pipeline, --job-version, --checkpoint-interval and --shard-poll-interval are set by the module. With job_jar: the jar's own arguments."
  type        = string
  default     = ""
  validation {
    condition     = var.job_jar != "" || length(regexall("--(source|stream-arn|store|region|pipeline|job-version|checkpoint-interval|shard-poll-interval)\\b", var.job_args)) == 0
    error_message = "job_args must not set a flag the module sets itself (use its variable: pipeline, job_version, checkpoint_interval_seconds, shard_poll_interval_ms)."
  }
}

variable "sql_script" {
  description = "A SQL script to run instead of the bundled job (snapshots submit --sql; e.g. file(\"orders.sql\")), written into the JobManager's task definition. The table its INSERT writes ('connector' = 'canonical-snapshots') must name this module's pipeline and job_version and a store under its store_uri; read the module's stream_arn with 'connector' = 'snapshots-kinesis'. Its SETs rule its checkpointing. A script that holds a secret (a password in a WITH clause) belongs in sql_script_secret_arn instead. Empty: the bundled job."
  type        = string
  default     = ""
  sensitive   = true
  validation {
    condition     = var.sql_script == "" || (var.job_jar == "" && var.job_args == "")
    error_message = "sql_script is the whole job: leave job_jar and job_args empty."
  }
}

variable "sql_script_secret_arn" {
  description = "A SQL script kept in Secrets Manager (the secret's text is the whole script, at most 64 KB): ECS reads it into the JobManager's SNAPSHOTS_SQL when the task starts (the task definition's secrets), so the script and what it holds appear in no task definition, plan or state. Same rules as sql_script, which the plan cannot check here: 'snapshots submit' checks at start that it writes a canonical-snapshots table with a pipeline, a job version and a store."
  type        = string
  default     = ""
  validation {
    condition     = var.sql_script_secret_arn == "" || can(regex("^arn:[^:]+:secretsmanager:[^:]+:[0-9]{12}:secret:[^:]+$", var.sql_script_secret_arn))
    error_message = "sql_script_secret_arn must be a Secrets Manager secret's ARN (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME-xxxxxx), or empty."
  }
  validation {
    condition     = var.sql_script_secret_arn == "" || (nonsensitive(var.sql_script == "") && var.job_jar == "" && var.job_args == "")
    error_message = "sql_script_secret_arn is the whole job: leave sql_script, job_jar and job_args empty."
  }
}

variable "rest_tls" {
  description = "Flink's REST API over TLS with mutual authentication (security.ssl.rest.enabled, security.ssl.rest.authentication-enabled): Secrets Manager secrets (ARNs) holding the REST keystore and truststore (PKCS12, base64) and their password (letters and digits: it goes into Flink's configuration). ECS hands them to the containers that serve or call the API (the JobManager, the protect sidecars, the lifecycle operator task) through the task definitions' secrets, never in a task definition; the command line presents the keystore's certificate. One key serves and calls: its certificate names localhost and jobmanager.<name>.internal and allows server and client authentication (README, Security). null: plain HTTP inside the security group."
  type = object({
    keystore_secret_arn   = string
    truststore_secret_arn = string
    password_secret_arn   = string
    mutual_authentication = optional(bool, true)
  })
  default = null
  validation {
    condition     = var.rest_tls == null ? true : alltrue([for arn in [var.rest_tls.keystore_secret_arn, var.rest_tls.truststore_secret_arn, var.rest_tls.password_secret_arn] : can(regex("^arn:[^:]+:secretsmanager:[^:]+:[0-9]{12}:secret:[^:]+$", arn))])
    error_message = "rest_tls takes Secrets Manager secrets' ARNs (arn:aws:secretsmanager:REGION:ACCOUNT:secret:NAME-xxxxxx)."
  }
}

variable "job_jar" {
  description = "A job jar of your own, as a path in the image (an image built FROM this one, e.g. /opt/flink/usrlib/my-job.jar), with job_args its own arguments. Its sink must write the module's pipeline, job_version and store_uri, which name the job (its id, the audit gate). Empty: the bundled job."
  type        = string
  default     = ""
}

variable "checkpoint_interval_seconds" {
  description = "The job's checkpoint interval (--checkpoint-interval). A JobManager's 'snapshots submit' waits three of them (at least 10 s) before it resumes, so it is part of every JobManager replacement."
  type        = number
  default     = 10
  validation {
    condition     = var.checkpoint_interval_seconds >= 1
    error_message = "checkpoint_interval_seconds must be at least 1."
  }
}

variable "shard_poll_interval_ms" {
  description = "How often the job's source calls GetRecords on each shard at most (--shard-poll-interval). Kinesis allows 5 calls per second per shard, shared by every consumer: the sum of 1000 / interval over the consumers (version N, a replay beside it) must stay within 5. 200 alone; 400 each for two."
  type        = number
  default     = 200
  validation {
    condition     = var.shard_poll_interval_ms >= 200
    error_message = "shard_poll_interval_ms must be at least 200: Kinesis allows 5 GetRecords calls per second per shard."
  }
}

variable "pipeline" {
  description = "Pipeline name: the first segment of every snapshot key."
  type        = string
  default     = "telemetry"
}

variable "iceberg_glue_table" {
  description = "The job's Iceberg reader table in Glue, as the job names it (IcebergTable.in with 'type' = 'glue', e.g. \"analytics.telemetry\"): the task role may then create and read that database, create, read and commit that table, and delete Iceberg's uncommitted metadata under <snapshot_prefix><pipeline>/_iceberg/metadata/. Empty (the default): no Glue permission."
  type        = string
  default     = ""
  validation {
    # What Iceberg's GlueCatalog accepts: Glue keeps names in lowercase.
    condition     = var.iceberg_glue_table == "" || can(regex("^[a-z0-9_]{1,252}\\.[a-z0-9_]{1,255}$", var.iceberg_glue_table))
    error_message = "iceberg_glue_table is database.table in lowercase letters, digits and underscores, as Iceberg's GlueCatalog names them."
  }
}

variable "job_version" {
  description = "Job version the JobManager submits; bump it (with from_savepoint) to start v=N+1 from version N's state (README, runbook)."
  type        = number
  default     = 1
}

variable "from_savepoint" {
  description = "Savepoint a job version starts from while it has no checkpoint of its own (SNAPSHOTS_FROM_SAVEPOINT; 'snapshots savepoint' prints one). Empty: a new version starts at the stream's trim horizon with empty state. Ignored once the version has checkpoints."
  type        = string
  default     = ""
  validation {
    condition     = var.from_savepoint == "" || startswith(var.from_savepoint, "s3://")
    error_message = "from_savepoint must be an s3:// path (what 'snapshots savepoint' prints), or empty."
  }
}

variable "existing_stream_arn" {
  description = "Read this Kinesis stream instead of creating one (e.g. version N's, for a replay beside it). Its consumers share its GetRecords budget (shard_poll_interval_ms)."
  type        = string
  default     = ""
  validation {
    condition     = var.existing_stream_arn == "" || can(regex("^arn:[^:]+:kinesis:[^:]+:[0-9]+:stream/.+$", var.existing_stream_arn))
    error_message = "existing_stream_arn must be a Kinesis stream ARN (arn:aws:kinesis:REGION:ACCOUNT:stream/NAME), or empty."
  }
}

variable "existing_bucket" {
  description = "Write to this bucket instead of creating one. The module then manages none of its settings: it must have what the module would give it (versioning, the write-once policy, the lifecycle rules; README). The plan warns when its policy has no write-once rule (a check, when the plan may read the policy), and the job refuses at start a store that accepts a second create-if-absent."
  type        = string
  default     = ""
}

variable "existing_cluster_name" {
  description = "Run the services in this ECS cluster instead of creating one."
  type        = string
  default     = ""
}

variable "execute_command" {
  description = "ECS Exec into the JobManager and TaskManager tasks (aws ecs execute-command; output exec_command). Off by default: a shell there has the task's role. On, every session is logged to CloudWatch Logs (/ecs/<name>/exec) and, with exec_log_bucket, to S3 (a cluster the module creates; an existing_cluster_name keeps its own configuration), and the lifecycle operators' policy may open one into the JobManager container."
  type        = bool
  default     = false
}

variable "exec_log_bucket" {
  description = "With execute_command: an S3 bucket that also keeps every ECS Exec session's log (under ecs-exec/<name>/). Empty: CloudWatch Logs only."
  type        = string
  default     = ""
}

variable "kms_key_arn" {
  description = "A customer-managed KMS key for the bucket, the stream, the log groups, the alarm topic and ECS Exec sessions; the roles may use this key only (through S3 and Kinesis). Its key policy must let CloudWatch Logs (logs.<region>.amazonaws.com), CloudWatch alarms and EventBridge (cloudwatch.amazonaws.com, events.amazonaws.com: the topic) use it. Empty: AWS-managed keys for the bucket and the stream, CloudWatch Logs' own encryption, and a key of the module's for the alarm topic."
  type        = string
  default     = ""
  validation {
    condition     = var.kms_key_arn == "" || can(regex("^arn:[^:]+:kms:[^:]+:[0-9]{12}:key/[0-9a-f-]+$", var.kms_key_arn))
    error_message = "kms_key_arn must be a KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID; not an alias), or empty."
  }
}

variable "egress_https_cidr_blocks" {
  description = "Where the tasks may open HTTPS connections (to AWS APIs): the world by default (a NAT gateway); a VPC's CIDR where interface endpoints serve every API. The tasks open nothing else but Flink's ports among themselves."
  type        = list(string)
  default     = ["0.0.0.0/0"]
  validation {
    condition     = alltrue([for c in var.egress_https_cidr_blocks : can(cidrnetmask(c))])
    error_message = "egress_https_cidr_blocks takes IPv4 CIDR blocks."
  }
}

variable "egress_https_prefix_list_ids" {
  description = "Managed prefix lists the tasks may reach over HTTPS as well, e.g. an S3 gateway endpoint's (aws_vpc_endpoint.s3.prefix_list_id), for S3 and ECR's image layers without a NAT gateway."
  type        = list(string)
  default     = []
  validation {
    condition     = length(var.egress_https_prefix_list_ids) + length(var.egress_https_cidr_blocks) > 0
    error_message = "The tasks need HTTPS to AWS: give egress_https_cidr_blocks or egress_https_prefix_list_ids."
  }
}

variable "operator_security_group_ids" {
  description = "Security groups (a bastion's, a VPN's) allowed to reach the JobManager's REST API and web UI on 8081. Empty by default: that API runs any uploaded jar with the task role and has no authentication. Prefer the operator task (output snapshots_function)."
  type        = list(string)
  default     = []
  validation {
    condition     = alltrue([for id in var.operator_security_group_ids : startswith(id, "sg-")])
    error_message = "operator_security_group_ids takes security group ids (sg-...), never address ranges."
  }
}

variable "network_ready" {
  description = "Ids of what the tasks' way out needs (VPC endpoints and their security group's rules, a NAT route, a pull-through cache rule): the services start after them, so the first image pulls do not fail and trip the circuit breaker. An input, not the module's depends_on, which would hold every data source of the module back to apply."
  type        = list(string)
  default     = []
}

variable "execution_role_policies" {
  description = "Inline policies (JSON, by name) for the execution role, with which ECS pulls the images and writes the logs: e.g. the right to fill an ECR pull-through cache (examples/complete). The services wait for them."
  type        = map(string)
  default     = {}
}

variable "operator_memory" {
  description = "Memory (MiB) of the one-off operator task (audit, savepoint, promote ...); its heap is this less 256."
  type        = number
  default     = 2048
  validation {
    condition     = contains([1024, 2048, 3072, 4096], var.operator_memory)
    error_message = "operator_memory must be 1024, 2048, 3072 or 4096 (Fargate's sizes for 0.5 vCPU)."
  }
}

variable "jobmanager_replacement_seconds" {
  description = "The JobManager replacement budget's parts (README, \"JobManager replacement on Fargate\", gives each one's source); the quiet wait of 'snapshots submit' is added from checkpoint_interval_seconds. The job-not-running alarm and taskmanager.registration.timeout follow from the sum. Raise a part you measured longer (a bigger image pulls longer)."
  type = object({
    old_jobmanager_stop = optional(number, 60)
    task_start          = optional(number, 60)
    image_pull          = optional(number, 60)
    jvm_start           = optional(number, 15)
    service_discovery   = optional(number, 25)
    submit_and_upload   = optional(number, 15)
    restore             = optional(number, 30)
  })
  default = {}
}

variable "taskmanager_count" {
  description = "TaskManager tasks the job needs: its parallelism is taskmanager_count * taskmanager_slots; give it about as many slots as the stream has shards. The sources use all of them; the window and the sink run at the largest parallelism up to it that keeps key-group buckets whole, so make it a divisor of the job's bucket count (--buckets, 4 by default) to use every slot."
  type        = number
  default     = 2
}

variable "spare_taskmanagers" {
  description = "TaskManager tasks beyond those the job needs, so the tasks of a lost TaskManager restart at once in free slots instead of waiting for ECS to start a replacement."
  type        = number
  default     = 1
  validation {
    condition     = var.spare_taskmanagers >= 0
    error_message = "spare_taskmanagers must be 0 or more."
  }
}

variable "taskmanager_slots" {
  description = "Task slots per TaskManager."
  type        = number
  default     = 2
}

variable "jobmanager_cpu" {
  type    = number
  default = 1024
}

variable "jobmanager_memory" {
  description = "JobManager task memory (MiB); Flink's jobmanager.memory.process.size is what is left after the sidecars and the command line."
  type        = number
  default     = 2048
}

variable "taskmanager_cpu" {
  type    = number
  default = 2048
}

variable "taskmanager_memory" {
  description = "TaskManager task memory (MiB); Flink's taskmanager.memory.process.size is what is left after the sidecars."
  type        = number
  default     = 4096
}

variable "cli_heap_mb" {
  description = "Heap of the snapshots command line (the protect sidecar, and 'snapshots submit' inside the JobManager container), set with JAVA_TOOL_OPTIONS."
  type        = number
  default     = 128
}

variable "cli_memory" {
  description = "Memory (MiB) of the protect sidecar, and what the JobManager task keeps aside for 'snapshots submit': the heap plus the JVM's own."
  type        = number
  default     = 256
  validation {
    condition     = var.cli_memory >= 2 * var.cli_heap_mb
    error_message = "cli_memory must be at least twice cli_heap_mb: metaspace, threads and code cache live outside the heap."
  }
}

variable "retained_checkpoints" {
  description = "Completed checkpoints Flink keeps (state.checkpoints.num-retained): a restarted JobManager can fall back past a damaged newest one."
  type        = number
  default     = 3
  validation {
    condition     = var.retained_checkpoints >= 1
    error_message = "retained_checkpoints must be at least 1."
  }
}

variable "stop_timeout_seconds" {
  description = "Seconds between SIGTERM and SIGKILL when ECS stops a task: time for Flink to shut down cleanly (Fargate allows up to 120)."
  type        = number
  default     = 120
  validation {
    condition     = var.stop_timeout_seconds >= 30 && var.stop_timeout_seconds <= 120
    error_message = "stop_timeout_seconds must be 30..120 (Fargate's maximum is 120)."
  }
}

variable "snapshot_prefix" {
  description = "Key prefix the snapshots are written under (the job's --store is s3://BUCKET/PREFIX)."
  type        = string
  default     = "snapshots/"
}

variable "checkpoint_prefix" {
  description = "Key prefix of Flink's checkpoints and savepoints; kept apart so the job may delete there and nowhere else."
  type        = string
  default     = "flink/"
}

variable "expire_prefix" {
  description = "Optional: objects under this prefix expire after expire_after_days (e.g. old dead letters, \"snapshots/_deadletter/\"). Empty: nothing expires."
  type        = string
  default     = ""
}

variable "expire_after_days" {
  type    = number
  default = 365
}

variable "allow_snapshot_expiry" {
  description = "Expiring snapshots themselves is refused unless this is true: a reader may still need an old window."
  type        = bool
  default     = false
}

variable "checkpoint_noncurrent_days" {
  description = "Days before old versions and delete markers of Flink's subsumed checkpoints (under checkpoint_prefix) are removed from the versioned bucket."
  type        = number
  default     = 1
  validation {
    condition     = var.checkpoint_noncurrent_days >= 1
    error_message = "checkpoint_noncurrent_days must be at least 1."
  }
}

variable "kinesis_shard_count" {
  type    = number
  default = 2
}

variable "kinesis_retention_hours" {
  description = "How far back a replay from a savepoint can reach into the stream."
  type        = number
  default     = 168
}

variable "scale_in_protection" {
  description = "Run the scale-in protection sidecar in every TaskManager task (snapshots protect)."
  type        = bool
  default     = true
}

variable "metrics" {
  description = "Run a CloudWatch agent sidecar in every task that scrapes Flink's Prometheus reporter and publishes the alarmed metrics to CloudWatch (namespace Snapshots/<name>)."
  type        = bool
  default     = true
}

variable "cloudwatch_agent_image" {
  description = "The CloudWatch agent image of the metrics sidecar, pinned by digest (…@sha256:…, with or without a tag before it): a tag can be moved to other content under a running deployment, a digest cannot. Tasks without internet access (VPC endpoints only) need a copy in ECR, e.g. through a pull-through cache (examples/complete does this). The default is the x86-64 image of version 1.300071.0b1720 (the tasks run on Fargate's X86_64)."
  type        = string
  default     = "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:1.300071.0b1720-amd64@sha256:f5680928b37cd5afacb5fd3de1b7ef7bfba57976f4f8b4227b49615467460cf2"
  validation {
    condition     = can(regex("@sha256:[0-9a-f]{64}$", var.cloudwatch_agent_image))
    error_message = "cloudwatch_agent_image must be pinned by digest (…/cloudwatch-agent:1.300071.0b1720-amd64@sha256:<64 hex digits>): a tag, latest or a version, can move."
  }
}

variable "metrics_agent_memory" {
  description = "Memory (MiB) of the metrics sidecar."
  type        = number
  default     = 256
}

variable "job_down_alarm_minutes" {
  description = "Alarm when the job has not been RUNNING (or the JobManager has reported nothing) for this many consecutive minutes. Unset: the JobManager replacement budget in whole minutes, plus one (6 with the defaults); a value within the budget is refused."
  type        = number
  default     = null
}

variable "restart_alarm_minutes" {
  description = "Window of the restart alarm, in minutes."
  type        = number
  default     = 15
}

variable "restart_alarm_count" {
  description = "Alarm when the job restarted in this many of the last restart_alarm_minutes minutes (a restart loop, not one lost TaskManager)."
  type        = number
  default     = 3
  validation {
    condition     = var.restart_alarm_count >= 1
    error_message = "restart_alarm_count must be at least 1."
  }
}

variable "checkpoint_alarm_minutes" {
  description = "Alarm when no checkpoint completed for this many consecutive minutes (keep it above the job's --checkpoint-interval)."
  type        = number
  default     = 10
  validation {
    condition     = var.checkpoint_alarm_minutes >= 2 && var.checkpoint_alarm_minutes * 60 >= 3 * var.checkpoint_interval_seconds
    error_message = "checkpoint_alarm_minutes must be at least 2, and at least three checkpoint intervals (checkpoint_interval_seconds)."
  }
}

variable "iterator_age_alarm_minutes" {
  description = "Alarm when the job reads the stream this many minutes behind (GetRecords.IteratorAgeMilliseconds) for 3 consecutive minutes."
  type        = number
  default     = 10
}

variable "pointer_alarm_minutes" {
  description = "Alarm when the completion pointer has not moved for this many minutes while the job reports (no window became whole). Keep it several windows long: the pointer moves once per window, after the window's lateness; a stream that goes quiet stops it too."
  type        = number
  default     = 30
  validation {
    condition     = var.pointer_alarm_minutes >= 5
    error_message = "pointer_alarm_minutes must be at least 5: the pointer moves once per window."
  }
}

variable "dead_letter_alarm_per_minute" {
  description = "Alarm when more records than this a minute become dead letters, in each of dead_letter_alarm_minutes minutes."
  type        = number
  default     = 60
}

variable "dead_letter_alarm_minutes" {
  description = "How many consecutive minutes the dead letters must stay above dead_letter_alarm_per_minute before the alarm pages: a rate, not a single bad record."
  type        = number
  default     = 10
}

variable "deployment_alarm_minutes" {
  description = "Alarm when a deployment is still IN_PROGRESS after this many minutes (the circuit breaker counts failed launches, not time)."
  type        = number
  default     = 30
}

variable "alarm_topic_arn" {
  description = "SNS topic for alarms; empty creates one."
  type        = string
  default     = ""
}

variable "log_retention_days" {
  type    = number
  default = 30
}

variable "tags" {
  type    = map(string)
  default = {}
}

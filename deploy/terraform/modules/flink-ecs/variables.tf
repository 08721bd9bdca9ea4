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
  description = "Extra job flags (snapshots run --help); --source, --stream-arn, --store and --region are set by the module."
  type        = string
  default     = "--checkpoint-interval 10s"
}

variable "pipeline" {
  description = "Pipeline name: the first segment of every snapshot key."
  type        = string
  default     = "telemetry"
}

variable "job_version" {
  description = "Job version the JobManager submits; bump it (with a savepoint) to replay history into v=N+1."
  type        = number
  default     = 1
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
  description = "The CloudWatch agent image of the metrics sidecar. Tasks without internet access (VPC endpoints only) need a copy in ECR, e.g. through a pull-through cache (examples/complete does this)."
  type        = string
  default     = "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:latest"
}

variable "metrics_agent_memory" {
  description = "Memory (MiB) of the metrics sidecar."
  type        = number
  default     = 256
}

variable "job_down_alarm_minutes" {
  description = "Alarm when the job has not been RUNNING (or the JobManager has reported nothing) for this many consecutive minutes."
  type        = number
  default     = 3
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
    condition     = var.checkpoint_alarm_minutes >= 2
    error_message = "checkpoint_alarm_minutes must be at least 2."
  }
}

variable "iterator_age_alarm_minutes" {
  description = "Alarm when the job reads the stream this many minutes behind (GetRecords.IteratorAgeMilliseconds) for 3 consecutive minutes."
  type        = number
  default     = 10
}

variable "collapsed_parts_threshold" {
  description = "Alarm when more parts than this collapsed into existing objects within 5 minutes: the same work was started more than once (a restart, or a second instance)."
  type        = number
  default     = 0
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

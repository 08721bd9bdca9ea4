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
  description = "TaskManager tasks; give the job about as many slots as the stream has shards."
  type        = number
  default     = 2
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
  type    = number
  default = 2048
}

variable "taskmanager_cpu" {
  type    = number
  default = 2048
}

variable "taskmanager_memory" {
  type    = number
  default = 4096
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

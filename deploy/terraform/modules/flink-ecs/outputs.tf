output "cluster_name" {
  value = aws_ecs_cluster.this.name
}

output "bucket" {
  description = "The bucket holding snapshots (snapshot_prefix) and Flink state (checkpoint_prefix)."
  value       = aws_s3_bucket.snapshots.bucket
}

output "store_uri" {
  description = "What readers and 'snapshots audit' point at."
  value       = local.store_uri
}

output "stream_arn" {
  value = aws_kinesis_stream.events.arn
}

output "jobmanager_service" {
  value = aws_ecs_service.flink["jobmanager"].name
}

output "taskmanager_service" {
  value = aws_ecs_service.flink["taskmanager"].name
}

output "jobmanager_rest" {
  description = "The JobManager's REST address inside the VPC (for snapshots upgrade / replay)."
  value       = "http://${local.jobmanager_host}:8081"
}

output "task_role_arn" {
  value = aws_iam_role.task.arn
}

output "alarm_topic_arn" {
  value = local.alarm_topic_arn
}

output "execution_role_name" {
  description = "The role ECS pulls images and writes logs with, e.g. to let it pull through an ECR cache."
  value       = aws_iam_role.execution.name
}

output "task_security_group_id" {
  description = "The tasks' security group, e.g. to let them reach VPC interface endpoints."
  value       = aws_security_group.flink.id
}

output "checkpoint_base" {
  description = "Where every JobManager incarnation keeps its checkpoints (one jm-<incarnation>/ directory each)."
  value       = local.checkpoint_base
}

output "metric_namespace" {
  description = "The CloudWatch namespace of the job's metrics and alarms."
  value       = local.metric_namespace
}

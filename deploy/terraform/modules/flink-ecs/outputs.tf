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

output "cluster_name" {
  value = local.cluster_name
}

output "bucket" {
  description = "The bucket holding snapshots (snapshot_prefix) and Flink state (checkpoint_prefix)."
  value       = local.bucket
}

output "store_uri" {
  description = "What readers and 'snapshots audit' point at."
  value       = local.store_uri
}

output "stream_arn" {
  value = local.stream_arn
}

output "jobmanager_service" {
  value = aws_ecs_service.flink["jobmanager"].name
}

output "taskmanager_service" {
  value = aws_ecs_service.flink["taskmanager"].name
}

output "jobmanager_rest" {
  description = "The JobManager's REST address inside the VPC: the --rest of the operator task's commands (savepoint, upgrade, replay)."
  value       = local.jobmanager_rest
}

output "task_role_arns" {
  description = "The task roles by duty: jm (the JobManager), tm (the TaskManagers and their protect sidecar), read (the read-only operator task), ops (the lifecycle operator task)."
  value       = { for duty, role in aws_iam_role.task : duty => role.arn }
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

output "operator_task_definitions" {
  description = "The one-off operator tasks' families, the job's image running the snapshots command line: read (audit, inspect, ddl; read-only role, no way to the REST API) and ops (the lifecycle commands; lifecycle role, in the cluster's security group)."
  value       = { for duty, task in aws_ecs_task_definition.operator : duty => task.family }
}

output "snapshots_function" {
  description = "A shell function 'snapshots ARGS...' that runs one command line as an operator task (the read-only one for audit, inspect and ddl, the lifecycle one otherwise), waits for it, prints its log and returns its exit status: eval \"$(terraform output -raw snapshots_function)\". Needs the AWS CLI and jq."
  value       = <<-EOT
    snapshots() {
      local task status definition=${local.operator_tasks.ops.family} group=${local.operator_tasks.ops.security_group}
      case "$1" in
        inspect | ddl | help | --help) definition=${local.operator_tasks.read.family} group=${local.operator_tasks.read.security_group} ;;
        # An acknowledgement is a write.
        audit) case " $* " in *" --acknowledge "*) ;; *) definition=${local.operator_tasks.read.family} group=${local.operator_tasks.read.security_group} ;; esac ;;
      esac
      task=$(${local.run_task} --overrides "$(jq -cn '{containerOverrides: [{name: "snapshots", command: $ARGS.positional}]}' --args -- "$@")") || return 2
      # 'wait' gives up after 10 minutes; an audit of a large store may take longer (an hour here).
      for _ in 1 2 3 4 5 6; do aws ecs wait tasks-stopped --cluster ${local.cluster_name} --tasks "$task" && break; done
      aws logs get-log-events --log-group-name ${aws_cloudwatch_log_group.flink["jobmanager"].name} --log-stream-name "snapshots/snapshots/$${task##*/}" --start-from-head --query 'events[].[message]' --output text
      status=$(aws ecs describe-tasks --cluster ${local.cluster_name} --tasks "$task" --query 'tasks[0].containers[0].exitCode' --output text)
      [ "$status" = 0 ] || { echo "snapshots: the operator task $task exited $status" >&2; return "$${status/None/2}"; }
    }
  EOT
}

output "exec_command" {
  description = "ECS Exec into the running JobManager (execute_command = true; null when off), for a shell beside it; the command line there is java -cp '/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar' dev.snapshots.cli.Cli."
  value       = var.execute_command ? "aws ecs execute-command --cluster ${local.cluster_name} --container jobmanager --interactive --command bash --task $(aws ecs list-tasks --cluster ${local.cluster_name} --service-name ${aws_ecs_service.flink["jobmanager"].name} --query 'taskArns[0]' --output text)" : null
}

output "operator_read_policy_json" {
  description = "An IAM policy for the operators who read: run the read-only operator task (audit, inspect, ddl), follow it, read its log."
  value       = jsonencode(local.operator_policies.read)
}

output "operator_lifecycle_policy_json" {
  description = "An IAM policy for the operators who run the job's lifecycle: run the lifecycle operator task (submit, upgrade, replay, savepoint, release, promote, audit --acknowledge), follow it, read its log, and, with execute_command, ECS Exec into the JobManager container."
  value       = jsonencode(local.operator_policies.ops)
}

output "stream_name" {
  value = local.stream_name
}

output "jobmanager_replacement_budget_seconds" {
  description = "How long a JobManager replacement keeps the job down by its budget (README, \"JobManager replacement on Fargate\")."
  value       = local.jobmanager_replacement_budget_seconds
}

output "jobmanager_replacement_worst_seconds" {
  description = "How long a JobManager replacement can keep the job down at worst (README, \"JobManager replacement on Fargate\"); the job-not-running alarm waits longer."
  value       = local.jobmanager_replacement_worst_seconds
}

output "bucket_setup" {
  description = "What this module gives a bucket it creates, for the owner of an existing_bucket to apply (the module leaves an existing bucket's policy and lifecycle alone): the bucket policy (TLS only, write-once under snapshot_prefix, pointers by compare-and-swap) for 'aws s3api put-bucket-policy --policy', and the lifecycle rules for 'aws s3api put-bucket-lifecycle-configuration --lifecycle-configuration', both JSON. The bucket must be versioned. deploy/terraform/own-bucket has them for a bucket of one's own."
  value = {
    policy    = jsonencode(local.bucket_policy)
    lifecycle = jsonencode({ Rules = local.lifecycle_rules })
  }
}

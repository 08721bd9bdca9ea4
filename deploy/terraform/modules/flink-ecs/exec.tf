# ECS Exec (execute_command): off by default. A shell in a task is a shell with the task's role, so
# when it is on, every session is logged (the cluster's execute_command_configuration: CloudWatch
# Logs, and S3 if exec_log_bucket is given), and only the lifecycle operators' policy may open one,
# into the JobManager container only.

locals {
  exec_log_group = {
    name = var.execute_command ? aws_cloudwatch_log_group.flink["exec"].name : ""
    arn  = var.execute_command ? aws_cloudwatch_log_group.flink["exec"].arn : ""
  }
  exec_log_s3    = var.execute_command && var.exec_log_bucket != ""
  exec_s3_prefix = "ecs-exec/${var.name}/"

  # The agent in the task opens its channel through SSM Session Manager (these take no resource
  # narrower than "*"), and writes the session's log with the task's role.
  # Statements of different shapes cannot be the two sides of a conditional: filtered instead.
  exec_statements = [for st in concat([
    {
      Sid      = "EcsExecChannels"
      Effect   = "Allow"
      Action   = ["ssmmessages:CreateControlChannel", "ssmmessages:CreateDataChannel", "ssmmessages:OpenControlChannel", "ssmmessages:OpenDataChannel"]
      Resource = ["*"]
    },
    {
      Sid      = "EcsExecFindsItsLogGroup"
      Effect   = "Allow"
      Action   = ["logs:DescribeLogGroups"]
      Resource = ["*"]
    },
    {
      Sid      = "EcsExecSessionLog"
      Effect   = "Allow"
      Action   = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
      Resource = [local.exec_log_group.arn, "${local.exec_log_group.arn}:*"]
    },
    ],
    local.exec_log_s3 ? [
      {
        Sid      = "EcsExecSessionLogInS3"
        Effect   = "Allow"
        Action   = ["s3:PutObject"]
        Resource = ["arn:${local.partition}:s3:::${var.exec_log_bucket}/${local.exec_s3_prefix}*"]
      },
      {
        Sid      = "EcsExecChecksTheLogBucketsEncryption"
        Effect   = "Allow"
        Action   = ["s3:GetEncryptionConfiguration"]
        Resource = ["arn:${local.partition}:s3:::${var.exec_log_bucket}"]
      },
    ] : [],
    # The session's data channel is encrypted with the cluster's key when there is one.
    [for key in local.kms_key : {
      Sid      = "EcsExecSessionKey"
      Effect   = "Allow"
      Action   = ["kms:Decrypt"]
      Resource = [key]
    }],
  ) : st if var.execute_command]

  # The lifecycle operators may open a session into the JobManager container of this module's
  # JobManager service, and find its task; nothing when ECS Exec is off.
  exec_operator_statements = [for st in concat([
    # A tag condition would test the cluster's own tags on the cluster's ARN: one statement each.
    {
      Sid       = "ExecIntoTheJobManager"
      Effect    = "Allow"
      Action    = ["ecs:ExecuteCommand"]
      Resource  = [local.cluster_tasks]
      Condition = { StringEquals = { "ecs:container-name" = "jobmanager", "aws:ResourceTag/${local.service_tag}" = local.service_names.jobmanager } }
    },
    {
      Sid       = "ExecInThisCluster"
      Effect    = "Allow"
      Action    = ["ecs:ExecuteCommand"]
      Resource  = [local.cluster_arn]
      Condition = { StringEquals = { "ecs:container-name" = "jobmanager" } }
    },
    {
      Sid       = "FindTheJobManagerTask"
      Effect    = "Allow"
      Action    = ["ecs:ListTasks"]
      Resource  = ["*"]
      Condition = { ArnEquals = { "ecs:cluster" = local.cluster_arn } }
    },
    ],
    [for key in local.kms_key : {
      Sid      = "ExecSessionKey"
      Effect   = "Allow"
      Action   = ["kms:GenerateDataKey"]
      Resource = [key]
    }],
  ) : st if var.execute_command]
}

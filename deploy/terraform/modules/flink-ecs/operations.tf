# Operating the job from outside the VPC: every 'snapshots' command runs as a one-off Fargate task of
# the job's own image, in the cluster's subnets, with a role for its duty:
#
#   read  audit, inspect, ddl: the read-only role, in a security group of its own that reaches AWS
#         only (not the REST API)
#   ops   submit, upgrade, replay, savepoint, release, promote, audit --acknowledge: the lifecycle
#         role, in the cluster's security group (it reaches the JobManager's REST API)
#
# Their output goes to the JobManager's log group under the prefix "snapshots"; output
# snapshots_function wraps run-task, the wait and the log into one shell function, and picks the
# task by the command.

locals {
  cli_entry_point = ["java", "-cp", "/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar", "dev.snapshots.cli.Cli"]
  operator_tasks = {
    read = { family = "${var.name}-snapshots-read", security_group = aws_security_group.operator_read.id }
    ops  = { family = "${var.name}-snapshots", security_group = aws_security_group.flink.id }
  }
  operator_container = {
    for duty in keys(local.operator_tasks) : duty => {
      name      = "snapshots"
      image     = var.image
      essential = true
      # The command line itself, not the image's entrypoint: the task's command is the CLI's
      # arguments (aws ecs run-task --overrides, containerOverrides[].command).
      entryPoint = concat(duty == "ops" && local.rest_tls ? local.rest_tls_entry_point : [], local.cli_entry_point)
      command    = ["--help"]
      environment = concat([
        { name = "AWS_REGION", value = local.region },
        # The audit reads every part of a week; the rest of the task's memory is the JVM's own.
        { name = "JAVA_TOOL_OPTIONS", value = "-Xmx${var.operator_memory - 256}m" },
        # For commands written against these names (the README's runbook).
        { name = "SNAPSHOTS_STORE", value = local.store_uri },
        ],
        # The read-only task cannot reach the REST API: it gets no address for it.
        duty == "ops" ? [{ name = "SNAPSHOTS_REST", value = local.jobmanager_rest }] : [],
      )
      logConfiguration = merge(local.log_configuration.jobmanager, {
        options = merge(local.log_configuration.jobmanager.options, { awslogs-stream-prefix = "snapshots" })
      })
      # The lifecycle commands call the REST API: with rest_tls, they present the key. The
      # read-only task gets no key.
      secrets = duty == "ops" ? local.rest_tls_secrets : []
    }
  }
  # The task a command runs as: the read-only one for what only reads, the lifecycle one otherwise
  # (an audit's --acknowledge writes).
  run_task = join(" ", [
    "aws ecs run-task --cluster ${local.cluster_name} --task-definition \"$definition\"",
    "--launch-type FARGATE --platform-version LATEST --started-by snapshots-cli --query 'tasks[0].taskArn' --output text",
    "--network-configuration \"awsvpcConfiguration={subnets=[${join(",", var.subnet_ids)}],securityGroups=[$group],assignPublicIp=DISABLED}\"",
  ])
}

resource "aws_ecs_task_definition" "operator" {
  for_each                 = local.operator_tasks
  family                   = each.value.family
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = 512
  memory                   = var.operator_memory
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.task[each.key].arn
  container_definitions    = jsonencode([local.operator_container[each.key]])
  tags                     = var.tags
}

# The one operator task of earlier versions is the lifecycle one now (same family).
moved {
  from = aws_ecs_task_definition.operator
  to   = aws_ecs_task_definition.operator["ops"]
}

# What an operator's own role needs to use a task above: start it (in this cluster, without ECS
# Exec), pass it its two roles and nothing else, follow it, and read its log. IAM has no condition
# key on a run-task's container overrides (command, environment) nor on a task size override:
# whatever an operator overrides, the task runs with its own role, since iam:PassRole names only
# that role and the execution role, for ECS tasks.
locals {
  operator_policies = { for duty, task in local.operator_tasks : duty => {
    Version = "2012-10-17"
    Statement = concat([
      {
        Sid      = "RunTheOperatorTask"
        Effect   = "Allow"
        Action   = ["ecs:RunTask"]
        Resource = ["${local.ecs_arn}:task-definition/${task.family}:*"]
        Condition = {
          ArnEquals            = { "ecs:cluster" = local.cluster_arn }
          StringEqualsIfExists = { "ecs:enable-execute-command" = "false" }
        }
      },
      {
        Sid       = "PassItsRoles"
        Effect    = "Allow"
        Action    = ["iam:PassRole"]
        Resource  = [aws_iam_role.task[duty].arn, aws_iam_role.execution.arn]
        Condition = { StringEquals = { "iam:PassedToService" = "ecs-tasks.amazonaws.com" } }
      },
      {
        Sid       = "FollowTasks"
        Effect    = "Allow"
        Action    = ["ecs:DescribeTasks"]
        Resource  = [local.cluster_tasks]
        Condition = { ArnEquals = { "ecs:cluster" = local.cluster_arn } }
      },
      {
        Sid      = "ReadTheOperatorLog"
        Effect   = "Allow"
        Action   = ["logs:GetLogEvents"]
        Resource = ["${aws_cloudwatch_log_group.flink["jobmanager"].arn}:log-stream:snapshots/*"]
      },
      ],
      [for st in local.exec_operator_statements : st if duty == "ops"],
    )
  } }
}

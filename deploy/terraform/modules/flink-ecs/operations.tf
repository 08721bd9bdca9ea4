# Operating the job from outside the VPC: 'snapshots savepoint | upgrade | replay | promote | audit
# | inspect' run as a one-off Fargate task of the job's own image, in the cluster's subnets and
# security group (so it reaches the JobManager's REST API, which nothing outside the cluster can),
# with the task role (so it reads and writes the store as the job does). Its output goes to the
# JobManager's log group under the prefix "snapshots"; output snapshots_function wraps run-task,
# the wait and the log into one shell function. ECS Exec into the JobManager (output exec_command)
# is the interactive alternative.

locals {
  operator_container = {
    name      = "snapshots"
    image     = var.image
    essential = true
    # The command line itself, not the image's entrypoint: the task's command is the CLI's
    # arguments (aws ecs run-task --overrides, containerOverrides[].command).
    entryPoint = ["java", "-cp", "/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar", "dev.snapshots.cli.Cli"]
    command    = ["--help"]
    environment = [
      { name = "AWS_REGION", value = data.aws_region.current.name },
      # The audit reads every part of a week; the rest of the task's memory is the JVM's own.
      { name = "JAVA_TOOL_OPTIONS", value = "-Xmx${var.operator_memory - 256}m" },
      # For commands written against these names (the README's runbook).
      { name = "SNAPSHOTS_REST", value = local.jobmanager_rest },
      { name = "SNAPSHOTS_STORE", value = local.store_uri },
    ]
    logConfiguration = merge(local.log_configuration.jobmanager, {
      options = merge(local.log_configuration.jobmanager.options, { awslogs-stream-prefix = "snapshots" })
    })
  }
  # aws ecs run-task for one command line; the overrides JSON is built by jq from the arguments.
  run_task = join(" ", [
    "aws ecs run-task --cluster ${local.cluster_name} --task-definition ${aws_ecs_task_definition.operator.family}",
    "--launch-type FARGATE --platform-version LATEST --started-by snapshots-cli --query 'tasks[0].taskArn' --output text",
    "--network-configuration 'awsvpcConfiguration={subnets=[${join(",", var.subnet_ids)}],securityGroups=[${aws_security_group.flink.id}],assignPublicIp=DISABLED}'",
  ])
}

resource "aws_ecs_task_definition" "operator" {
  family                   = "${var.name}-snapshots"
  requires_compatibilities = ["FARGATE"]
  network_mode             = "awsvpc"
  cpu                      = 512
  memory                   = var.operator_memory
  execution_role_arn       = aws_iam_role.execution.arn
  task_role_arn            = aws_iam_role.task.arn
  container_definitions    = jsonencode([local.operator_container])
  tags                     = var.tags
}

# What an operator's own role needs to use the above: start the operator task (and pass it its
# roles), follow it, read its log, and ECS Exec into the cluster's tasks.
data "aws_iam_policy_document" "operator" {
  statement {
    sid       = "RunOperatorTask"
    actions   = ["ecs:RunTask"]
    resources = ["arn:${data.aws_partition.current.partition}:ecs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:task-definition/${aws_ecs_task_definition.operator.family}:*"]
  }
  statement {
    sid       = "PassItsRoles"
    actions   = ["iam:PassRole"]
    resources = [aws_iam_role.task.arn, aws_iam_role.execution.arn]
  }
  statement {
    sid       = "FollowTasksAndExec"
    actions   = ["ecs:DescribeTasks", "ecs:ListTasks", "ecs:ExecuteCommand"]
    resources = ["arn:${data.aws_partition.current.partition}:ecs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:task/${local.cluster_name}/*", local.cluster_arn, "arn:${data.aws_partition.current.partition}:ecs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:container-instance/${local.cluster_name}/*"]
  }
  statement {
    sid       = "ReadItsLog"
    actions   = ["logs:GetLogEvents", "logs:FilterLogEvents"]
    resources = ["${aws_cloudwatch_log_group.flink["jobmanager"].arn}:*"]
  }
}

# Flink on ECS Fargate for the snapshot job: a JobManager service (one task) that submits or
# resumes the job at start, and a TaskManager service (N tasks), found through Cloud Map.

locals {
  store_uri       = "s3://${aws_s3_bucket.snapshots.bucket}/${trimsuffix(var.snapshot_prefix, "/")}"
  jobmanager_host = "jobmanager.${aws_service_discovery_private_dns_namespace.this.name}"
  alarm_topic_arn = var.alarm_topic_arn != "" ? var.alarm_topic_arn : aws_sns_topic.alarms[0].arn
  # A staged part's durable copy must outlive the longest outage the job can recover from: the
  # stream's retention (beyond it the unread records are gone anyway), plus a day.
  staging_retention_days = ceil(var.kinesis_retention_hours / 24) + 1

  flink_properties = join("\n", [
    "jobmanager.rpc.address: ${local.jobmanager_host}",
    "jobmanager.rpc.port: 6123",
    "blob.server.port: 6124",
    "taskmanager.rpc.port: 6122",
    "taskmanager.data.port: 6121",
    "taskmanager.numberOfTaskSlots: ${var.taskmanager_slots}",
    "parallelism.default: ${var.taskmanager_count * var.taskmanager_slots}",
    "state.checkpoints.dir: s3://${aws_s3_bucket.snapshots.bucket}/${var.checkpoint_prefix}checkpoints",
    "state.savepoints.dir: s3://${aws_s3_bucket.snapshots.bucket}/${var.checkpoint_prefix}savepoints",
    # Without ZooKeeper the JobManager resumes from retained checkpoints: keep them on cancel.
    "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION",
    "heartbeat.interval: 2000",
    "heartbeat.timeout: 15000",
    "restart-strategy.type: exponential-delay",
    # Throughput over pause times: ParallelGC ran the pipeline 9-15 % faster than G1 (docs/BENCHMARKS.md).
    "env.java.opts.taskmanager: -XX:+UseParallelGC",
  ])

  common_environment = [
    { name = "FLINK_PROPERTIES", value = local.flink_properties },
    { name = "AWS_REGION", value = data.aws_region.current.name },
  ]
}

data "aws_region" "current" {}
data "aws_caller_identity" "current" {}

resource "aws_ecs_cluster" "this" {
  name = var.name
  setting {
    name  = "containerInsights"
    value = "enabled"
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

resource "aws_security_group" "flink" {
  name        = "${var.name}-flink"
  description = "JobManager and TaskManagers talk to each other; nothing else comes in."
  vpc_id      = var.vpc_id
  ingress {
    description = "Flink RPC, blob server, data exchange and REST between the job's own tasks"
    from_port   = 6121
    to_port     = 8081
    protocol    = "tcp"
    self        = true
  }
  egress {
    description = "S3, Kinesis, ECR, CloudWatch Logs"
    from_port   = 0
    to_port     = 0
    protocol    = "-1"
    cidr_blocks = ["0.0.0.0/0"]
  }
  tags = var.tags
}

locals {
  log_configuration = { for role, group in {
    jobmanager  = "jobmanager"
    taskmanager = "taskmanager"
    protect     = "taskmanager"
    } : role => {
    logDriver = "awslogs"
    options = {
      awslogs-group         = aws_cloudwatch_log_group.flink[group].name
      awslogs-region        = data.aws_region.current.name
      awslogs-stream-prefix = role
    }
  } }
  health_check_timing = { interval = 15, timeout = 5, retries = 4, startPeriod = 60 }

  containers = {
    jobmanager = [{
      name      = "jobmanager"
      image     = var.image
      essential = true
      command   = ["jobmanager"]
      environment = concat(local.common_environment, [{
        name  = "SNAPSHOTS_JOB_ARGS"
        value = "--source kinesis --stream-arn ${aws_kinesis_stream.events.arn} --store ${local.store_uri} --region ${data.aws_region.current.name} --pipeline ${var.pipeline} --job-version ${var.job_version} ${var.job_args}"
      }])
      portMappings = [for p in [6123, 6124, 8081] : { containerPort = p, protocol = "tcp" }]
      # Stop-with-savepoint and a clean shutdown need time after SIGTERM.
      stopTimeout      = var.stop_timeout_seconds
      healthCheck      = merge(local.health_check_timing, { command = ["CMD-SHELL", "curl -sf http://localhost:8081/overview || exit 1"] })
      logConfiguration = local.log_configuration.jobmanager
    }]
    taskmanager = concat([{
      name             = "taskmanager"
      image            = var.image
      essential        = true
      command          = ["taskmanager"]
      environment      = local.common_environment
      stopTimeout      = var.stop_timeout_seconds
      healthCheck      = merge(local.health_check_timing, { command = ["CMD-SHELL", "bash -c '</dev/tcp/127.0.0.1/6122' || exit 1"] })
      logConfiguration = local.log_configuration.taskmanager
      }], var.scale_in_protection ? [{
      # Keeps scale-in protection on while the job runs; checkpoints and lets go when ECS wants the task.
      name             = "protect"
      image            = var.image
      essential        = false
      command          = ["protect"]
      environment      = [{ name = "SNAPSHOTS_REST", value = "http://${local.jobmanager_host}:8081" }]
      stopTimeout      = var.stop_timeout_seconds
      logConfiguration = local.log_configuration.protect
    }] : [])
  }

  tasks = {
    jobmanager  = { cpu = var.jobmanager_cpu, memory = var.jobmanager_memory, count = 1 }
    taskmanager = { cpu = var.taskmanager_cpu, memory = var.taskmanager_memory, count = var.taskmanager_count }
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
  task_role_arn            = aws_iam_role.task.arn
  container_definitions    = jsonencode(local.containers[each.key])
  tags                     = var.tags
}

resource "aws_ecs_service" "flink" {
  for_each        = local.tasks
  name            = "${var.name}-${each.key}"
  cluster         = aws_ecs_cluster.this.id
  task_definition = aws_ecs_task_definition.flink[each.key].arn
  desired_count   = each.value.count
  launch_type     = "FARGATE"
  # New tasks start before old ones stop. For the JobManager that means two instances of the job
  # run for a while: the sink's conditional writes make that safe, which is what it exists for.
  deployment_minimum_healthy_percent = 100
  deployment_maximum_percent         = 200
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
  propagate_tags = "SERVICE"
  tags           = var.tags
}

resource "aws_cloudwatch_log_group" "flink" {
  for_each          = local.tasks
  name              = "/ecs/${var.name}/${each.key}"
  retention_in_days = var.log_retention_days
  tags              = var.tags
}

resource "aws_kinesis_stream" "events" {
  name             = "${var.name}-events"
  shard_count      = var.kinesis_shard_count
  retention_period = var.kinesis_retention_hours
  encryption_type  = "KMS"
  kms_key_id       = "alias/aws/kinesis"
  stream_mode_details {
    stream_mode = "PROVISIONED"
  }
  tags = var.tags
}

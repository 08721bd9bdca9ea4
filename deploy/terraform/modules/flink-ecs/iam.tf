# Least privilege, a role per duty. ECS gives a role to a task, not to a container, so a sidecar has
# its task's role; what could be split is split by task:
#
#   jm    the JobManager task: Flink and the sink ('snapshots submit' beside it), its metrics agent
#   tm    the TaskManager tasks: the same, and the protect sidecar's task protection, on this
#         service's own tasks only
#   read  the read-only operator task: audit, inspect (and its store page), ddl
#   ops   the lifecycle operator task: submit, upgrade, replay, savepoint, release, promote, and an
#         audit's --acknowledge (a write)
#
# The job may read and write snapshots and abort its own uploads, but never delete a snapshot
# object: only a staged copy once its part is published, and the progress log's old entries.
# Checkpoints live under their own prefix, where Flink must delete old ones.
#
# The documents are HCL values encoded with jsonencode, not aws_iam_policy_document: the JSON a
# plan shows, and the module's tests read, is then the JSON AWS receives (a mocked provider renders
# no policy document).

locals {
  partition  = data.aws_partition.current.partition
  region     = data.aws_region.current.name
  account_id = data.aws_caller_identity.current.account_id
  ecs_arn    = "arn:${local.partition}:ecs:${local.region}:${local.account_id}"
  # Tasks carry their service's tags (propagate_tags): a right meant for one service's tasks names
  # its tag, since a task's ARN does not say which service started it (a shared cluster,
  # existing_cluster_name, holds other services' tasks too).
  service_tag   = "snapshots:service"
  service_names = { for k in ["jobmanager", "taskmanager"] : k => "${var.name}-${k}" }
  cluster_tasks = "${local.ecs_arn}:task/${local.cluster_name}/*"
  kms_key       = var.kms_key_arn != "" ? [var.kms_key_arn] : []

  # S3 answers a HEAD or GET of a missing key with 404 only to a caller allowed s3:ListBucket on the
  # bucket, and 403 otherwise; the sink and the audit tell "not there yet" from "denied" by it. That
  # implicit check carries no s3:prefix, so a StringLike condition (which fails when the key is
  # absent) made every missing key a 403. IfExists: a listing that names a prefix must stay under
  # the role's own, a request without one (that check, a listing of the bucket's top) is allowed.
  # ListMultipartUploads (the audit's and the sink's view of staged parts) supports no s3:prefix
  # condition key, so under one it was never allowed; it lists upload keys, not contents.
  s3_listing = { for duty, prefixes in {
    flink = [var.snapshot_prefix, var.checkpoint_prefix]
    read  = [var.snapshot_prefix]
    ops   = [var.snapshot_prefix, var.checkpoint_prefix]
    } : duty => [
    {
      Sid       = "ListOwnPrefixes"
      Effect    = "Allow"
      Action    = ["s3:ListBucket"]
      Resource  = [local.bucket_arn]
      Condition = { StringLikeIfExists = { "s3:prefix" = concat([for p in prefixes : "${p}*"], [""]) } }
    },
    {
      Sid      = "ListUploads"
      Effect   = "Allow"
      Action   = ["s3:ListBucketMultipartUploads"]
      Resource = [local.bucket_arn]
    },
  ] }

  # A customer-managed key (kms_key_arn) encrypts the bucket and the stream: the roles may use that
  # key, and only through those services. Without one, the AWS-managed keys (aws/s3, aws/kinesis)
  # admit every principal of the account that the service lets in, and no grant is needed.
  kms_use = { for duty, actions in {
    flink = ["kms:Decrypt", "kms:GenerateDataKey"]
    read  = ["kms:Decrypt"]
    ops   = ["kms:Decrypt", "kms:GenerateDataKey"]
    } : duty => [for key in local.kms_key : {
      Sid       = "UseTheKeyThroughS3AndKinesis"
      Effect    = "Allow"
      Action    = actions
      Resource  = [key]
      Condition = { StringEquals = { "kms:ViaService" = [for s in ["s3", "kinesis"] : "${s}.${local.region}.${data.aws_partition.current.dns_suffix}"] } }
  }] }

  flink_statements = concat(local.s3_listing.flink, [
    {
      Sid      = "WriteSnapshotsNeverDelete"
      Effect   = "Allow"
      Action   = ["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
      Resource = ["${local.bucket_arn}/${var.snapshot_prefix}*"]
    },
    # Never a part: only a staged copy once its part is published, and the progress log's old entries.
    {
      Sid    = "DeletePublishedStagingAndOldProgress"
      Effect = "Allow"
      Action = ["s3:DeleteObject"]
      Resource = [
        "${local.bucket_arn}/${var.snapshot_prefix}_staging/*",
        "${local.bucket_arn}/${var.snapshot_prefix}*/_progress/*",
      ]
    },
    {
      Sid      = "FlinkCheckpointsAndSavepoints"
      Effect   = "Allow"
      Action   = ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
      Resource = ["${local.bucket_arn}/${var.checkpoint_prefix}*"]
    },
    {
      Sid      = "ReadTheStream"
      Effect   = "Allow"
      Action   = ["kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords", "kinesis:GetShardIterator", "kinesis:ListShards"]
      Resource = [local.stream_arn]
    },
    ],
    local.kms_use.flink,
    # The Iceberg reader table in Glue (iceberg_glue_table): what Iceberg's GlueCatalog calls to
    # create, load and commit it, on that database and table only. A commit is GetTable, then
    # UpdateTable with the table's VersionId, Glue's optimistic lock; no lock table is needed.
    # The table's metadata is written with the sink's own client, under the snapshot prefix (read
    # and created above, each file once, with If-None-Match, as the bucket policy asks). A commit
    # that loses a race deletes the metadata it wrote; never a data file, which is a canonical part.
    local.iceberg_glue ? [
      {
        Sid      = "IcebergGlueDatabase"
        Effect   = "Allow"
        Action   = ["glue:GetDatabase", "glue:CreateDatabase"]
        Resource = [local.glue_catalog_arn, local.glue_database_arn]
      },
      {
        Sid      = "IcebergGlueTable"
        Effect   = "Allow"
        Action   = ["glue:GetTable", "glue:CreateTable", "glue:UpdateTable"]
        Resource = [local.glue_catalog_arn, local.glue_database_arn, local.glue_table_arn]
      },
      {
        Sid      = "IcebergUncommittedMetadata"
        Effect   = "Allow"
        Action   = ["s3:DeleteObject"]
        Resource = [local.iceberg_metadata]
      },
    ] : [],
    # The metrics sidecar publishes Flink's metrics as embedded-metric-format log events into its
    # own log group, and needs nothing else (no cloudwatch:PutMetricData).
    var.metrics ? [{
      Sid      = "MetricsAgentWritesItsLogGroup"
      Effect   = "Allow"
      Action   = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
      Resource = [aws_cloudwatch_log_group.flink["metrics"].arn, "${aws_cloudwatch_log_group.flink["metrics"].arn}:*"]
    }] : [],
    local.exec_statements,
  )

  # The protect sidecar keeps its own task protected. Only the TaskManager service's tasks: the
  # ARN pattern names the cluster, the tag names the service.
  protection_statements = var.scale_in_protection ? [{
    Sid      = "OwnServiceScaleInProtection"
    Effect   = "Allow"
    Action   = ["ecs:GetTaskProtection", "ecs:UpdateTaskProtection"]
    Resource = [local.cluster_tasks]
    Condition = {
      ArnEquals    = { "ecs:cluster" = local.cluster_arn }
      StringEquals = { "aws:ResourceTag/${local.service_tag}" = local.service_names.taskmanager }
    }
  }] : []

  # audit, inspect (its page), ddl: read the snapshots, nothing else; no checkpoint, no stream, no
  # write. The read-only task is also outside the cluster's security group, so it cannot reach the
  # REST API, which would run anything (a cancel among it) for whoever reaches it.
  read_statements = concat(local.s3_listing.read, [{
    Sid      = "ReadSnapshots"
    Effect   = "Allow"
    Action   = ["s3:GetObject"]
    Resource = ["${local.bucket_arn}/${var.snapshot_prefix}*"]
  }], local.kms_use.read)

  # The lifecycle commands: the REST API (the security group), the retained checkpoints submit and
  # upgrade resume from, what the audit gate reads, and the writes they make: promote's
  # compare-and-swap of a pipeline's _current.json and its record under promoted/, an audit's
  # acknowledgement, the conformance probe (written, then deleted), and submit's removal of earlier
  # JobManager incarnations' checkpoints. No part, manifest or progress entry.
  ops_statements = concat(local.s3_listing.ops, [
    {
      Sid      = "ReadSnapshotsAndCheckpoints"
      Effect   = "Allow"
      Action   = ["s3:GetObject"]
      Resource = ["${local.bucket_arn}/${var.snapshot_prefix}*", "${local.bucket_arn}/${var.checkpoint_prefix}*"]
    },
    {
      Sid    = "PromoteAcknowledgeProbe"
      Effect = "Allow"
      Action = ["s3:PutObject"]
      Resource = concat([
        "${local.bucket_arn}/${var.snapshot_prefix}*/_current.json",
        "${local.bucket_arn}/${var.snapshot_prefix}*/promoted/*",
        "${local.bucket_arn}/${var.snapshot_prefix}_audit/acknowledged/*",
        "${local.bucket_arn}/${var.snapshot_prefix}_conformance/*",
      ], local.iceberg_glue ? [local.iceberg_metadata] : [])
    },
    {
      Sid    = "RemoveProbesAndOldIncarnations"
      Effect = "Allow"
      Action = ["s3:DeleteObject"]
      Resource = concat([
        "${local.bucket_arn}/${var.snapshot_prefix}_conformance/*",
        "${local.bucket_arn}/${var.checkpoint_prefix}checkpoints/*",
      ], local.iceberg_glue ? [local.iceberg_metadata] : [])
    },
    ],
    local.kms_use.ops,
    # promote moves the Iceberg table's main branch too (--iceberg-table): read and commit it.
    local.iceberg_glue ? [{
      Sid      = "IcebergGluePromote"
      Effect   = "Allow"
      Action   = ["glue:GetDatabase", "glue:GetTable", "glue:UpdateTable"]
      Resource = [local.glue_catalog_arn, local.glue_database_arn, local.glue_table_arn]
    }] : [],
  )

  task_role_statements = {
    jm   = local.flink_statements
    tm   = concat(local.flink_statements, local.protection_statements)
    read = local.read_statements
    ops  = local.ops_statements
  }
}

resource "aws_iam_role" "execution" {
  name_prefix        = "${var.name}-exec-"
  assume_role_policy = jsonencode(local.assume_ecs_tasks)
  tags               = var.tags
}

resource "aws_iam_role_policy_attachment" "execution" {
  role       = aws_iam_role.execution.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"
}

# Inline policies of the execution role beyond ECS's own: the module's (secrets), and the caller's
# (execution_role_policies, e.g. an ECR pull-through cache). The services wait for them, or the
# first tasks' pulls fail and trip the circuit breaker.
resource "aws_iam_role_policy" "execution" {
  for_each = local.execution_policies
  name     = each.key
  role     = aws_iam_role.execution.id
  policy   = each.value
}

# Keys are short: a role's name_prefix may have 38 characters, and var.name has up to 31.
resource "aws_iam_role" "task" {
  for_each           = local.task_role_statements
  name_prefix        = "${var.name}-${each.key}-"
  assume_role_policy = jsonencode(local.assume_task_role)
  tags               = var.tags
}

resource "aws_iam_role_policy" "task" {
  for_each = local.task_role_statements
  name     = "snapshots-${each.key}"
  role     = aws_iam_role.task[each.key].id
  policy   = jsonencode({ Version = "2012-10-17", Statement = each.value })
}

# The one task role of earlier versions served every task; it is the JobManager's now.
moved {
  from = aws_iam_role.task
  to   = aws_iam_role.task["jm"]
}
moved {
  from = aws_iam_role_policy.task
  to   = aws_iam_role_policy.task["jm"]
}

locals {
  execution_policies = merge(var.execution_role_policies, local.secrets_policy)
  assume_ecs_tasks = {
    Version   = "2012-10-17"
    Statement = [{ Effect = "Allow", Action = "sts:AssumeRole", Principal = { Service = "ecs-tasks.amazonaws.com" } }]
  }
  # A task role is assumed for this account's ECS tasks only: the confused-deputy guard ECS
  # documents for task roles.
  assume_task_role = merge(local.assume_ecs_tasks, { Statement = [merge(local.assume_ecs_tasks.Statement[0], {
    Condition = {
      StringEquals = { "aws:SourceAccount" = local.account_id }
      ArnLike      = { "aws:SourceArn" = "${local.ecs_arn}:*" }
    }
  })] })
  iceberg_glue      = var.iceberg_glue_table != ""
  glue_arn          = "arn:${local.partition}:glue:${local.region}:${local.account_id}"
  glue_catalog_arn  = "${local.glue_arn}:catalog"
  glue_database_arn = "${local.glue_arn}:database/${split(".", var.iceberg_glue_table)[0]}"
  glue_table_arn    = "${local.glue_arn}:table/${replace(var.iceberg_glue_table, ".", "/")}"
  iceberg_metadata  = "${local.bucket_arn}/${var.snapshot_prefix}${var.pipeline}/_iceberg/metadata/*"
}

# Least privilege. The job may read and write snapshots and abort its own uploads, but never delete
# a snapshot object: only a staged copy once its part is published, and the progress log's old
# entries. Checkpoints live under their own prefix, where Flink must delete old ones.

data "aws_iam_policy_document" "assume_ecs_tasks" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ecs-tasks.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "execution" {
  name_prefix        = "${var.name}-exec-"
  assume_role_policy = data.aws_iam_policy_document.assume_ecs_tasks.json
  tags               = var.tags
}

resource "aws_iam_role_policy_attachment" "execution" {
  role       = aws_iam_role.execution.name
  policy_arn = "arn:aws:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy"
}

resource "aws_iam_role" "task" {
  name_prefix        = "${var.name}-task-"
  assume_role_policy = data.aws_iam_policy_document.assume_ecs_tasks.json
  tags               = var.tags
}

data "aws_iam_policy_document" "task" {
  # S3 answers a HEAD or GET of a missing key with 404 only to a caller allowed s3:ListBucket on the
  # bucket, and 403 otherwise; the sink tells "not there yet" from "denied" by it. That implicit
  # check carries no s3:prefix, so a StringLike condition (which fails when the key is absent) made
  # every missing key a 403. IfExists: a listing that names a prefix must stay under the job's own,
  # a request without one (that check, a listing of the bucket's top) is allowed.
  statement {
    sid       = "ListOwnPrefixes"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
    condition {
      test     = "StringLikeIfExists"
      variable = "s3:prefix"
      values   = ["${var.snapshot_prefix}*", "${var.checkpoint_prefix}*", ""]
    }
  }

  # ListMultipartUploads (the audit's and the sink's view of staged parts) supports no s3:prefix
  # condition key, so under one it was never allowed; it lists upload keys, not contents.
  statement {
    sid       = "ListUploads"
    actions   = ["s3:ListBucketMultipartUploads"]
    resources = [local.bucket_arn]
  }

  statement {
    sid = "WriteSnapshotsNeverDelete"
    actions = [
      "s3:GetObject",
      "s3:PutObject",
      "s3:AbortMultipartUpload",
      "s3:ListMultipartUploadParts",
    ]
    resources = ["${local.bucket_arn}/${var.snapshot_prefix}*"]
  }

  # Never a part: only a staged copy once its part is published, and the progress log's old entries.
  statement {
    sid     = "DeletePublishedStagingAndOldProgress"
    actions = ["s3:DeleteObject"]
    resources = [
      "${local.bucket_arn}/${var.snapshot_prefix}_staging/*",
      "${local.bucket_arn}/${var.snapshot_prefix}*/_progress/*",
    ]
  }

  statement {
    sid = "FlinkCheckpointsAndSavepoints"
    actions = [
      "s3:GetObject",
      "s3:PutObject",
      "s3:DeleteObject",
      "s3:AbortMultipartUpload",
      "s3:ListMultipartUploadParts",
    ]
    resources = ["${local.bucket_arn}/${var.checkpoint_prefix}*"]
  }

  statement {
    sid = "ReadTheStream"
    actions = [
      "kinesis:DescribeStream",
      "kinesis:DescribeStreamSummary",
      "kinesis:GetRecords",
      "kinesis:GetShardIterator",
      "kinesis:ListShards",
    ]
    resources = [local.stream_arn]
  }

  statement {
    sid       = "EncryptedBucketAndStream"
    actions   = ["kms:Decrypt", "kms:GenerateDataKey"]
    resources = ["arn:aws:kms:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:key/*"]
    condition {
      test     = "StringLike"
      variable = "kms:ViaService"
      values   = ["s3.${data.aws_region.current.name}.amazonaws.com", "kinesis.${data.aws_region.current.name}.amazonaws.com"]
    }
  }

  statement {
    sid       = "OwnScaleInProtection"
    actions   = ["ecs:GetTaskProtection", "ecs:UpdateTaskProtection"]
    resources = ["arn:aws:ecs:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}:task/${local.cluster_name}/*"]
  }

  # ECS Exec (enable_execute_command): the agent in the task opens its channel through SSM
  # Session Manager; these actions take no resource narrower than "*".
  dynamic "statement" {
    for_each = var.execute_command ? [1] : []
    content {
      sid = "EcsExec"
      actions = [
        "ssmmessages:CreateControlChannel",
        "ssmmessages:CreateDataChannel",
        "ssmmessages:OpenControlChannel",
        "ssmmessages:OpenDataChannel",
      ]
      resources = ["*"]
    }
  }

  # The Iceberg reader table in Glue (iceberg_glue_table): what Iceberg's GlueCatalog calls to
  # create, load and commit it, on that database and table only. A commit is GetTable, then
  # UpdateTable with the table's VersionId, Glue's optimistic lock; no lock table is needed.
  dynamic "statement" {
    for_each = local.iceberg_glue ? [1] : []
    content {
      sid       = "IcebergGlueDatabase"
      actions   = ["glue:GetDatabase", "glue:CreateDatabase"]
      resources = [local.glue_catalog_arn, local.glue_database_arn]
    }
  }

  dynamic "statement" {
    for_each = local.iceberg_glue ? [1] : []
    content {
      sid       = "IcebergGlueTable"
      actions   = ["glue:GetTable", "glue:CreateTable", "glue:UpdateTable"]
      resources = [local.glue_catalog_arn, local.glue_database_arn, local.glue_table_arn]
    }
  }

  # The table's metadata is written with the sink's own client, under the snapshot prefix (read and
  # created above, each file once, with If-None-Match, as the bucket policy asks). A commit that
  # loses a race deletes the metadata it wrote; never a data file, which is a canonical part.
  dynamic "statement" {
    for_each = local.iceberg_glue ? [1] : []
    content {
      sid       = "IcebergUncommittedMetadata"
      actions   = ["s3:DeleteObject"]
      resources = ["${local.bucket_arn}/${var.snapshot_prefix}${var.pipeline}/_iceberg/metadata/*"]
    }
  }

  # The metrics sidecar publishes Flink's metrics as embedded-metric-format log events.
  statement {
    sid       = "PublishMetrics"
    actions   = ["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]
    resources = [aws_cloudwatch_log_group.flink["metrics"].arn, "${aws_cloudwatch_log_group.flink["metrics"].arn}:*"]
  }
}

resource "aws_iam_role_policy" "task" {
  name   = "snapshots-job"
  role   = aws_iam_role.task.id
  policy = data.aws_iam_policy_document.task.json
}

locals {
  iceberg_glue      = var.iceberg_glue_table != ""
  glue_arn          = "arn:${data.aws_partition.current.partition}:glue:${data.aws_region.current.name}:${data.aws_caller_identity.current.account_id}"
  glue_catalog_arn  = "${local.glue_arn}:catalog"
  glue_database_arn = "${local.glue_arn}:database/${split(".", var.iceberg_glue_table)[0]}"
  glue_table_arn    = "${local.glue_arn}:table/${replace(var.iceberg_glue_table, ".", "/")}"
}

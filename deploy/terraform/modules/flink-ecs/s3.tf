# One bucket: snapshots under snapshot_prefix, Flink's checkpoints and savepoints under
# checkpoint_prefix. Versioned, encrypted, private, TLS only.

resource "aws_s3_bucket" "snapshots" {
  bucket_prefix = "${var.name}-"
  tags          = var.tags
}

resource "aws_s3_bucket_versioning" "snapshots" {
  bucket = aws_s3_bucket.snapshots.id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "snapshots" {
  bucket = aws_s3_bucket.snapshots.id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm = "aws:kms"
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_public_access_block" "snapshots" {
  bucket                  = aws_s3_bucket.snapshots.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "snapshots" {
  bucket = aws_s3_bucket.snapshots.id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

data "aws_iam_policy_document" "tls_only" {
  statement {
    sid     = "DenyInsecureTransport"
    effect  = "Deny"
    actions = ["s3:*"]
    resources = [
      aws_s3_bucket.snapshots.arn,
      "${aws_s3_bucket.snapshots.arn}/*",
    ]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "aws:SecureTransport"
      values   = ["false"]
    }
  }
}

resource "aws_s3_bucket_policy" "tls_only" {
  bucket     = aws_s3_bucket.snapshots.id
  policy     = data.aws_iam_policy_document.tls_only.json
  depends_on = [aws_s3_bucket_public_access_block.snapshots]
}

resource "aws_s3_bucket_lifecycle_configuration" "snapshots" {
  bucket     = aws_s3_bucket.snapshots.id
  depends_on = [aws_s3_bucket_versioning.snapshots]

  # A writer that died between staging a part and its checkpoint leaves a multipart upload behind.
  # A part whose upload this removes before it is published is published from its staged copy.
  rule {
    id     = "abort-incomplete-multipart-uploads"
    status = "Enabled"
    filter {}
    abort_incomplete_multipart_upload {
      days_after_initiation = 1
    }
  }

  # Staged copies: the committer deletes each once its part is published; what is left belongs to
  # a writer that died before its checkpoint, or to a job down for longer than this, which has
  # lost the stream's unread records by then anyway.
  rule {
    id     = "expire-staged-copies"
    status = "Enabled"
    filter {
      prefix = "${var.snapshot_prefix}_staging/"
    }
    expiration {
      days = local.staging_retention_days
    }
  }

  # The progress pointer's copy is rewritten, and its log's old entries deleted: their old
  # versions are of no use after a week.
  # Parts are never overwritten, so they never have noncurrent versions.
  rule {
    id     = "expire-noncurrent-versions"
    status = "Enabled"
    filter {}
    noncurrent_version_expiration {
      noncurrent_days = 7
    }
  }

  # Optional, and never the snapshots themselves unless allow_snapshot_expiry says so.
  dynamic "rule" {
    for_each = var.expire_prefix == "" ? [] : [var.expire_prefix]
    content {
      id     = "expire-${replace(rule.value, "/", "-")}"
      status = "Enabled"
      filter {
        prefix = rule.value
      }
      expiration {
        days = var.expire_after_days
      }
    }
  }

  lifecycle {
    precondition {
      condition = var.allow_snapshot_expiry || var.expire_prefix == "" || !(
        startswith(var.snapshot_prefix, var.expire_prefix) || (
          startswith(var.expire_prefix, var.snapshot_prefix) && !startswith(var.expire_prefix, "${var.snapshot_prefix}_deadletter/")
        )
      )
      error_message = "expire_prefix would expire snapshots (only their _deadletter/ may expire); set allow_snapshot_expiry = true if that is really meant."
    }
  }
}

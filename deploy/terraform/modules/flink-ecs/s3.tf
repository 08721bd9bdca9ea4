# One bucket: snapshots under snapshot_prefix, Flink's checkpoints and savepoints under
# checkpoint_prefix. Versioned, encrypted, private, TLS only, and write-once under snapshot_prefix.
# With existing_bucket the module creates none of this: the bucket's owner (e.g. the module
# instance of version N, when this one runs a replay beside it) keeps its settings, since a bucket
# has one policy and one lifecycle configuration, which two instances would overwrite in turn.

resource "aws_s3_bucket" "snapshots" {
  count         = local.create_bucket ? 1 : 0
  bucket_prefix = "${var.name}-"
  tags          = var.tags
}

resource "aws_s3_bucket_versioning" "snapshots" {
  count  = local.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.snapshots[0].id
  versioning_configuration {
    status = "Enabled"
  }
}

resource "aws_s3_bucket_server_side_encryption_configuration" "snapshots" {
  count  = local.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.snapshots[0].id
  rule {
    apply_server_side_encryption_by_default {
      sse_algorithm     = "aws:kms"
      kms_master_key_id = var.kms_key_arn != "" ? var.kms_key_arn : null
    }
    bucket_key_enabled = true
  }
}

resource "aws_s3_bucket_public_access_block" "snapshots" {
  count                   = local.create_bucket ? 1 : 0
  bucket                  = aws_s3_bucket.snapshots[0].id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}

resource "aws_s3_bucket_ownership_controls" "snapshots" {
  count  = local.create_bucket ? 1 : 0
  bucket = aws_s3_bucket.snapshots[0].id
  rule {
    object_ownership = "BucketOwnerEnforced"
  }
}

locals {
  # What the sink writes under the snapshot prefix without If-None-Match: the staged copies (plain
  # PUTs, deleted once their part is published) and the two pointers, the completion pointer of a
  # job version and the version readers follow, rewritten in place with If-Match.
  staged_copies = "${local.bucket_arn}/${var.snapshot_prefix}_staging/*"
  pointers = [
    "${local.bucket_arn}/${var.snapshot_prefix}*/_progress.json",
    "${local.bucket_arn}/${var.snapshot_prefix}*/_current.json",
  ]
  # Flink's checkpoints and savepoints: written and overwritten without conditions, their own prefix.
  flink_state = "${local.bucket_arn}/${var.checkpoint_prefix}*"
}

locals {
  # A policy cannot say "this prefix, except", hence NotResource below: the bucket is the job's, so
  # the write-once rule holds for every key but the exempt ones.
  bucket_policy = {
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "DenyInsecureTransport"
        Effect    = "Deny"
        Principal = "*"
        Action    = "s3:*"
        Resource  = [local.bucket_arn, "${local.bucket_arn}/*"]
        Condition = { Bool = { "aws:SecureTransport" = "false" } }
      },
      # Everything else the sink writes (parts, manifests, the progress log's entries, divergence
      # evidence, audit acknowledgements) is created once, with If-None-Match: *, so no writer with
      # a bug or a stale plan can replace a published object. s3:PutObject also authorizes
      # CreateMultipartUpload, UploadPart and UploadPartCopy, which take no conditional header: for
      # them s3:ObjectCreationOperation is false, and the check falls on CompleteMultipartUpload
      # instead. An operator's upload needs If-None-Match too ('aws s3api put-object
      # --if-none-match "*"'), and CopyObject into those keys fails (S3 answers a conditional one
      # with 501 under such a policy).
      {
        Sid         = "DenyUnconditionalCreates"
        Effect      = "Deny"
        Principal   = "*"
        Action      = "s3:PutObject"
        NotResource = concat([local.staged_copies, local.flink_state], local.pointers)
        Condition = {
          Null = { "s3:if-none-match" = "true" }
          Bool = { "s3:ObjectCreationOperation" = "true" }
        }
      },
      # The pointers move only by compare-and-swap: If-Match on their current ETag, or
      # If-None-Match when they are first created.
      {
        Sid       = "DenyBlindPointerWrites"
        Effect    = "Deny"
        Principal = "*"
        Action    = "s3:PutObject"
        Resource  = local.pointers
        Condition = {
          Null = { "s3:if-none-match" = "true", "s3:if-match" = "true" }
          Bool = { "s3:ObjectCreationOperation" = "true" }
        }
      },
    ]
  }
}

moved {
  from = aws_s3_bucket_policy.tls_only
  to   = aws_s3_bucket_policy.snapshots
}

resource "aws_s3_bucket_policy" "snapshots" {
  count      = local.create_bucket ? 1 : 0
  bucket     = aws_s3_bucket.snapshots[0].id
  policy     = jsonencode(local.bucket_policy)
  depends_on = [aws_s3_bucket_public_access_block.snapshots]
}

# The bucket's lifecycle rules in the S3 API's own shape (PutBucketLifecycleConfiguration), so
# that the owner of an existing_bucket gets them as JSON to apply (output bucket_setup), and this
# module's own bucket the same rules through the resource below.
locals {
  lifecycle_rules = concat(local.lifecycle_rules_always, [for prefix in compact([var.expire_prefix]) : {
    # Optional, and never the snapshots themselves unless allow_snapshot_expiry says so.
    ID         = "expire-${replace(prefix, "/", "-")}"
    Status     = "Enabled"
    Filter     = { Prefix = prefix }
    Expiration = { Days = var.expire_after_days }
  }])
  lifecycle_rules_always = [
    # A writer that died between staging a part and its checkpoint leaves a multipart upload
    # behind. A part whose upload this removes before it is published is published from its
    # staged copy.
    {
      ID                             = "abort-incomplete-multipart-uploads"
      Status                         = "Enabled"
      Filter                         = {}
      AbortIncompleteMultipartUpload = { DaysAfterInitiation = 1 }
    },
    # Staged copies: the committer deletes each once its part is published; what is left belongs
    # to a writer that died before its checkpoint, or to a job down for longer than this, which
    # has lost the stream's unread records by then anyway.
    {
      ID         = "expire-staged-copies"
      Status     = "Enabled"
      Filter     = { Prefix = "${var.snapshot_prefix}_staging/" }
      Expiration = { Days = local.staging_retention_days }
    },
    # The progress pointer's copy is rewritten, its log's old entries are deleted, and each start's
    # conformance probe deletes what it wrote: their old versions are of no use after a week, and
    # the delete markers those deletes leave go once nothing is behind them (about 2P a window
    # from the log alone, which every pointer update would otherwise list past forever). Parts are
    # never overwritten, so they never have noncurrent versions.
    {
      ID                          = "expire-noncurrent-versions"
      Status                      = "Enabled"
      Filter                      = {}
      NoncurrentVersionExpiration = { NoncurrentDays = 7 }
      Expiration                  = { ExpiredObjectDeleteMarker = true }
    },
    # A conformance probe killed before it cleaned up leaves a few bytes here.
    {
      ID         = "expire-conformance-probes"
      Status     = "Enabled"
      Filter     = { Prefix = "${var.snapshot_prefix}_conformance/" }
      Expiration = { Days = 1 }
    },
    # A collapse record says that a second execution computed a part and found it equal: what the
    # store page draws as a collapsed cell. Informational, one per part and Flink job; after a
    # quarter a cell shows as published.
    {
      ID         = "expire-collapse-records"
      Status     = "Enabled"
      Filter     = { Prefix = "${var.snapshot_prefix}_collapsed/" }
      Expiration = { Days = 90 }
    },
    # Flink deletes every subsumed checkpoint; in a versioned bucket each delete leaves the data as
    # a noncurrent version behind a delete marker. Both go soon (S3 honours the shorter of two
    # overlapping expirations), and the markers once nothing is left behind them.
    {
      ID                          = "expire-checkpoint-churn"
      Status                      = "Enabled"
      Filter                      = { Prefix = var.checkpoint_prefix }
      NoncurrentVersionExpiration = { NoncurrentDays = var.checkpoint_noncurrent_days }
      Expiration                  = { ExpiredObjectDeleteMarker = true }
    },
  ]
}

resource "aws_s3_bucket_lifecycle_configuration" "snapshots" {
  count      = local.create_bucket ? 1 : 0
  bucket     = aws_s3_bucket.snapshots[0].id
  depends_on = [aws_s3_bucket_versioning.snapshots]

  dynamic "rule" {
    for_each = local.lifecycle_rules
    content {
      id     = rule.value.ID
      status = rule.value.Status
      filter {
        prefix = lookup(rule.value.Filter, "Prefix", null)
      }
      dynamic "abort_incomplete_multipart_upload" {
        for_each = can(rule.value.AbortIncompleteMultipartUpload) ? [rule.value.AbortIncompleteMultipartUpload] : []
        content {
          days_after_initiation = abort_incomplete_multipart_upload.value.DaysAfterInitiation
        }
      }
      dynamic "expiration" {
        for_each = can(rule.value.Expiration) ? [rule.value.Expiration] : []
        content {
          days                         = lookup(expiration.value, "Days", null)
          expired_object_delete_marker = lookup(expiration.value, "ExpiredObjectDeleteMarker", null)
        }
      }
      dynamic "noncurrent_version_expiration" {
        for_each = can(rule.value.NoncurrentVersionExpiration) ? [rule.value.NoncurrentVersionExpiration] : []
        content {
          noncurrent_days = noncurrent_version_expiration.value.NoncurrentDays
        }
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

# The resources above gained a count (existing_bucket); state written before keeps its place.
moved {
  from = aws_s3_bucket.snapshots
  to   = aws_s3_bucket.snapshots[0]
}
moved {
  from = aws_s3_bucket_versioning.snapshots
  to   = aws_s3_bucket_versioning.snapshots[0]
}
moved {
  from = aws_s3_bucket_server_side_encryption_configuration.snapshots
  to   = aws_s3_bucket_server_side_encryption_configuration.snapshots[0]
}
moved {
  from = aws_s3_bucket_public_access_block.snapshots
  to   = aws_s3_bucket_public_access_block.snapshots[0]
}
moved {
  from = aws_s3_bucket_ownership_controls.snapshots
  to   = aws_s3_bucket_ownership_controls.snapshots[0]
}
moved {
  from = aws_s3_bucket_policy.snapshots
  to   = aws_s3_bucket_policy.snapshots[0]
}
moved {
  from = aws_s3_bucket_lifecycle_configuration.snapshots
  to   = aws_s3_bucket_lifecycle_configuration.snapshots[0]
}

# The bucket the job writes to must refuse a second create of a published object: the write-once
# rule above, which a bucket given by existing_bucket must have too. A check (a warning, not an
# error: the plan's own credentials may not read bucket policies) reads the policy of the bucket in
# use, once it exists. Whatever the plan could see, the job's start probes the store itself
# (StoreConformance.require) and refuses one that accepts a second create-if-absent.
check "the_bucket_is_write_once" {
  data "aws_s3_bucket_policy" "in_use" {
    bucket = local.bucket
    # The module's own bucket is read once its policy is in place.
    depends_on = [aws_s3_bucket_policy.snapshots]
  }
  assert {
    # The module's own policy is asserted by its tests; a plan that creates it cannot read it yet.
    condition = local.create_bucket ? true : anytrue([for st in try(jsondecode(data.aws_s3_bucket_policy.in_use.policy).Statement, []) :
      try(st.Effect, "") == "Deny" && contains(flatten([try(st.Action, [])]), "s3:PutObject") && try(st.Condition.Null["s3:if-none-match"], "") == "true"
    ])
    error_message = "The policy of bucket ${local.bucket} has no write-once rule (a Deny of s3:PutObject without If-None-Match): a second execution could replace a published object. Give it the module's bucket policy (README, \"The bucket\")."
  }
}

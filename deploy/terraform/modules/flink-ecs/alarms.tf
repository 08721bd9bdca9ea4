# Alarms page for trouble only: a deployment that failed, a deployment that hangs IN_PROGRESS (the
# circuit breaker counts failed launches, not time, so it never fires on a hang), a job not running
# past its replacement budget, restarts in a loop, checkpoints that stopped, a completion pointer that
# stopped, dead letters above a rate, a reader falling behind the stream, and any divergence the sink
# reports. Work done twice (collapsed parts) is how the design absorbs a restart: a metric and a
# line on the dashboard, never a page.
#
# treat_missing_data is chosen per alarm, with the reason beside it. A JobManager that reports
# nothing is the job-not-running alarm's case alone, so the others do not page a second time for it.

locals {
  create_topic = var.alarm_topic_arn == ""
  # The topic's messages are encrypted at rest. CloudWatch alarms and EventBridge cannot publish to
  # a topic under the AWS-managed key (its key policy admits no service), so without kms_key_arn
  # the module gives the topic a key of its own.
  topic_key_arn = var.kms_key_arn != "" ? var.kms_key_arn : (local.create_topic ? aws_kms_key.alarms[0].arn : null)
  # Who may publish: this account's alarms and rules whose names start with the instance's name
  # (a replay beside it, named "<name>-replay", sends to this topic too), nothing else.
  publishers = {
    cloudwatch = "arn:${local.partition}:cloudwatch:${local.region}:${local.account_id}:alarm:${var.name}-*"
    events     = "arn:${local.partition}:events:${local.region}:${local.account_id}:rule/${var.name}-*"
  }
}

resource "aws_kms_key" "alarms" {
  count               = local.create_topic && var.kms_key_arn == "" ? 1 : 0
  description         = "${var.name}: the alarm topic's messages at rest"
  enable_key_rotation = true
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      # The account's IAM policies decide who else may use it (the deployment watch's role).
      {
        Sid       = "AccountIamPolicies"
        Effect    = "Allow"
        Principal = { AWS = "arn:${local.partition}:iam::${local.account_id}:root" }
        Action    = "kms:*"
        Resource  = "*"
      },
      {
        Sid       = "AlarmsAndRulesPublish"
        Effect    = "Allow"
        Principal = { Service = ["cloudwatch.amazonaws.com", "events.amazonaws.com"] }
        Action    = ["kms:Decrypt", "kms:GenerateDataKey*"]
        Resource  = "*"
        Condition = { StringEquals = { "aws:SourceAccount" = local.account_id } }
      },
    ]
  })
  tags = var.tags
}

resource "aws_sns_topic" "alarms" {
  count             = local.create_topic ? 1 : 0
  name              = "${var.name}-alarms"
  kms_master_key_id = local.topic_key_arn
  tags              = var.tags
}

resource "aws_sns_topic_policy" "alarms" {
  count = local.create_topic ? 1 : 0
  arn   = aws_sns_topic.alarms[0].arn
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [for service, source in local.publishers : {
      Sid       = "${title(service)}Publishes"
      Effect    = "Allow"
      Principal = { Service = "${service}.amazonaws.com" }
      Action    = "sns:Publish"
      Resource  = aws_sns_topic.alarms[0].arn
      Condition = {
        StringEquals = { "aws:SourceAccount" = local.account_id }
        ArnLike      = { "aws:SourceArn" = source }
      }
    }]
  })
}

# SERVICE_DEPLOYMENT_FAILED (the circuit breaker rolled a deployment back) goes to the topic;
# SERVICE_DEPLOYMENT_IN_PROGRESS starts a timer, and if the same deployment is still IN_PROGRESS
# when it runs out, the topic hears about that.
resource "aws_cloudwatch_event_rule" "deployment" {
  for_each = {
    failed  = "SERVICE_DEPLOYMENT_FAILED"
    started = "SERVICE_DEPLOYMENT_IN_PROGRESS"
  }
  name        = "${var.name}-deployment-${each.key}"
  description = "${each.value} of the JobManager or TaskManager service."
  event_pattern = jsonencode({
    source        = ["aws.ecs"]
    "detail-type" = ["ECS Deployment State Change"]
    resources     = [for s in aws_ecs_service.flink : s.id]
    detail        = { eventName = [each.value] }
  })
  tags = var.tags
}

resource "aws_cloudwatch_event_target" "deployment_failed" {
  rule = aws_cloudwatch_event_rule.deployment["failed"].name
  arn  = local.alarm_topic_arn
}

resource "aws_sfn_state_machine" "deployment_watch" {
  name     = "${var.name}-deployment-watch"
  role_arn = aws_iam_role.deployment_watch.arn
  definition = jsonencode({
    Comment = "Alarm when a deployment stays IN_PROGRESS longer than ${var.deployment_alarm_minutes} minutes."
    StartAt = "Wait"
    States = {
      Wait = { Type = "Wait", Seconds = var.deployment_alarm_minutes * 60, Next = "Describe" }
      Describe = {
        Type     = "Task"
        Resource = "arn:${local.partition}:states:::aws-sdk:ecs:describeServices"
        Parameters = {
          Cluster      = local.cluster_arn
          "Services.$" = "States.Array($.resources[0])"
        }
        ResultSelector = { "rollout.$" = "$.Services[0].Deployments[?(@.RolloutState == 'IN_PROGRESS')]" }
        ResultPath     = "$.described"
        Next           = "StillInProgress"
      }
      StillInProgress = {
        Type    = "Choice"
        Choices = [{ Variable = "$.described.rollout[0]", IsPresent = true, Next = "Alarm" }]
        Default = "Done"
      }
      Alarm = {
        Type     = "Task"
        Resource = "arn:${local.partition}:states:::sns:publish"
        Parameters = {
          TopicArn    = local.alarm_topic_arn
          Subject     = "${var.name}: deployment still IN_PROGRESS after ${var.deployment_alarm_minutes} minutes"
          "Message.$" = "$.resources[0]"
        }
        End = true
      }
      Done = { Type = "Succeed" }
    }
  })
  tags = var.tags
}

resource "aws_iam_role" "deployment_watch" {
  name_prefix = "${var.name}-watch-"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Action    = "sts:AssumeRole"
      Principal = { Service = ["states.amazonaws.com", "events.amazonaws.com"] }
      Condition = { StringEquals = { "aws:SourceAccount" = local.account_id } }
    }]
  })
  tags = var.tags
}

resource "aws_iam_role_policy" "deployment_watch" {
  name = "deployment-watch"
  role = aws_iam_role.deployment_watch.id
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat([
      {
        Sid      = "DescribeOwnServices"
        Effect   = "Allow"
        Action   = ["ecs:DescribeServices"]
        Resource = [for s in aws_ecs_service.flink : s.id]
      },
      {
        Sid      = "Alarm"
        Effect   = "Allow"
        Action   = ["sns:Publish"]
        Resource = [local.alarm_topic_arn]
      },
      {
        Sid      = "StartWatch"
        Effect   = "Allow"
        Action   = ["states:StartExecution"]
        Resource = [aws_sfn_state_machine.deployment_watch.arn]
      },
      ],
      # Publishing to an encrypted topic encrypts the message with the topic's key, as the caller.
      local.topic_key_arn == null ? [] : [{
        Sid      = "EncryptForTheTopic"
        Effect   = "Allow"
        Action   = ["kms:Decrypt", "kms:GenerateDataKey"]
        Resource = [local.topic_key_arn]
      }],
    )
  })
}

resource "aws_cloudwatch_event_target" "deployment_started" {
  rule     = aws_cloudwatch_event_rule.deployment["started"].name
  arn      = aws_sfn_state_machine.deployment_watch.arn
  role_arn = aws_iam_role.deployment_watch.arn
}

# The committer logs "DIVERGENCE at <key>" when two executions computed different bytes for a part.
resource "aws_cloudwatch_log_metric_filter" "divergence" {
  name           = "${var.name}-divergence"
  log_group_name = aws_cloudwatch_log_group.flink["taskmanager"].name
  pattern        = "\"DIVERGENCE at\""
  metric_transformation {
    name          = "Divergences"
    namespace     = "Snapshots/${var.name}"
    value         = "1"
    default_value = "0"
  }
}

resource "aws_cloudwatch_metric_alarm" "divergence" {
  alarm_name          = "${var.name}-divergence"
  alarm_description   = "Two executions of the same window computed different content; see _divergence/ in the store and run snapshots audit."
  namespace           = "Snapshots/${var.name}"
  metric_name         = "Divergences"
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  # The filter writes a datapoint only when the TaskManagers log: no log, no divergence logged.
  treat_missing_data = "notBreaching"
  alarm_actions      = [local.alarm_topic_arn]
}

# --- The job's health, from Flink's own metrics (the metrics sidecar, main.tf) ----------------------

# Not RUNNING (created, restarting, failing, suspended) past the replacement budget's worst case, or
# no JobManager reporting for as long.
resource "aws_cloudwatch_metric_alarm" "job_not_running" {
  count               = var.metrics ? 1 : 0
  alarm_name          = "${var.name}-job-not-running"
  alarm_description   = "The job has not been RUNNING for ${local.job_down_alarm_minutes} minutes (a JobManager replacement takes ${local.jobmanager_replacement_budget_seconds} s by its budget, ${local.jobmanager_replacement_worst_seconds} s at worst), or (INSUFFICIENT_DATA) the JobManager has reported nothing for as long. Check the JobManager service's events and log (/ecs/${var.name}/jobmanager) and 'snapshots submit' in it."
  namespace           = local.metric_namespace
  metric_name         = local.flink_metrics.running_time
  dimensions          = { cluster = var.name }
  statistic           = "Minimum"
  period              = 60
  evaluation_periods  = local.job_down_alarm_minutes
  datapoints_to_alarm = local.job_down_alarm_minutes
  comparison_operator = "LessThanThreshold"
  threshold           = 1
  # Missing data is not a breach: created before the first JobManager reports (a first deploy), the
  # alarm stays INSUFFICIENT_DATA, which is its initial state and pages nobody. Once reported, a
  # JobManager that reports nothing for the whole evaluation range moves it to INSUFFICIENT_DATA,
  # and that transition pages (insufficient_data_actions): silence past the budget is trouble.
  treat_missing_data        = "missing"
  alarm_actions             = [local.alarm_topic_arn]
  insufficient_data_actions = [local.alarm_topic_arn]
  ok_actions                = [local.alarm_topic_arn]

  lifecycle {
    precondition {
      condition     = local.job_down_alarm_minutes * 60 > local.jobmanager_replacement_worst_seconds
      error_message = "job_down_alarm_minutes (${local.job_down_alarm_minutes}) would fire during a routine JobManager replacement, at worst ${local.jobmanager_replacement_worst_seconds} s (budget ${local.jobmanager_replacement_budget_seconds} s); leave it unset to derive it from the budget."
    }
  }
}

# One lost TaskManager costs one restart (into the spare's slots); restarts in several minutes of a
# window are a loop: a poisoned input, the store refusing, a TaskManager that keeps dying.
resource "aws_cloudwatch_metric_alarm" "job_restarting" {
  count               = var.metrics ? 1 : 0
  alarm_name          = "${var.name}-job-restarting"
  alarm_description   = "The job restarted in ${var.restart_alarm_count} of the last ${var.restart_alarm_minutes} minutes. Check the exceptions in the JobManager's log or REST API (/jobs/<id>/exceptions)."
  evaluation_periods  = var.restart_alarm_minutes
  datapoints_to_alarm = var.restart_alarm_count
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  # A JobManager that reports nothing is the job-not-running alarm's case.
  treat_missing_data = "notBreaching"
  alarm_actions      = [local.alarm_topic_arn]
  metric_query {
    id = "restarts"
    metric {
      namespace   = local.metric_namespace
      metric_name = local.flink_metrics.restarts
      dimensions  = { cluster = var.name }
      stat        = "Maximum"
      period      = 60
    }
  }
  metric_query {
    id          = "new_restarts"
    expression  = "DIFF(restarts)"
    label       = "Restarts in the minute"
    return_data = true
  }
}

# Two values must keep moving while the job reports; a minute without a higher one is a minute
# without progress:
# - the newest completed checkpoint's id. Checkpoints bound what a restart redoes and carry the
#   committables: none completing means the sink publishes nothing and the next restart goes back
#   further. The id carries on across JobManagers (the count of completed ones does not);
# - the completion pointer (every window up to it has all its parts), which moves once per window.
#   One that does not move is a window that never became whole: a bucket that never publishes, a
#   pointer write the store refuses, or a watermark held back (an idle shard; a stream that goes
#   quiet stops the pointer too, so raise pointer_alarm_minutes for one that does). The series is
#   the largest of the job's pointers (its snapshots' and its dead letters').
locals {
  stalls = {
    checkpoints = {
      minutes     = var.checkpoint_alarm_minutes
      metric      = local.flink_metrics.last_checkpoint_id
      label       = "Checkpoints completed in the minute"
      description = "No checkpoint completed for ${var.checkpoint_alarm_minutes} minutes. Check the failed checkpoints (REST /jobs/<id>/checkpoints), the JobManager's log, S3 access to the checkpoint prefix and backpressure."
    }
    pointer = {
      minutes     = var.pointer_alarm_minutes
      metric      = local.flink_metrics.complete_through
      label       = "Milliseconds the completion pointer moved in the minute"
      description = "The completion pointer of ${var.name} has not moved for ${var.pointer_alarm_minutes} minutes while the job reports: no window became whole. Check the sink's log for progress failures, 'snapshots inspect' for the window that waits and its missing parts, and the sources' watermarks (an idle shard)."
    }
  }
}

resource "aws_cloudwatch_metric_alarm" "stalled" {
  for_each            = var.metrics ? local.stalls : {}
  alarm_name          = "${var.name}-${each.key}-stalled"
  alarm_description   = each.value.description
  evaluation_periods  = each.value.minutes
  datapoints_to_alarm = each.value.minutes
  comparison_operator = "LessThanOrEqualToThreshold"
  threshold           = 0
  # A JobManager that reports nothing is the job-not-running alarm's case, and one that has not
  # reported yet (a first deploy) is no stall: a reported value that does not move is.
  treat_missing_data = "notBreaching"
  alarm_actions      = [local.alarm_topic_arn]
  ok_actions         = [local.alarm_topic_arn]
  metric_query {
    id = "value"
    metric {
      namespace   = local.metric_namespace
      metric_name = each.value.metric
      dimensions  = { cluster = var.name }
      stat        = "Maximum"
      period      = 60
    }
  }
  metric_query {
    id          = "moved"
    expression  = "DIFF(value)"
    label       = each.value.label
    return_data = true
  }
}

moved {
  from = aws_cloudwatch_metric_alarm.checkpoints_stalled[0]
  to   = aws_cloudwatch_metric_alarm.stalled["checkpoints"]
}

# --- The stream and the output -----------------------------------------------------------------

# How far behind the newest record this job reads: its own readers' view (the source's
# millisBehindLatest, the largest over its shards), not the stream's GetRecords.IteratorAgeMilliseconds,
# which is the oldest read of every consumer: with a replay catching up beside version N it shows the
# replay's backlog, and N's own lag could not be seen. Every module instance (version N, a replay)
# alarms on its own consumer. A job that reports nothing is the job-not-running alarm's case, so
# missing data does not breach here (a routine JobManager replacement would otherwise fire it).
resource "aws_cloudwatch_metric_alarm" "stream_lag" {
  count               = var.metrics ? 1 : 0
  alarm_name          = "${var.name}-stream-lag"
  alarm_description   = "Job version ${var.job_version} (${var.name}) reads ${local.stream_name} more than ${var.iterator_age_alarm_minutes} minutes behind. Past the stream's retention unread records are lost. With a replay beside it, check the stream's read throttling (the dashboard ${var.name}): consumers share 5 GetRecords per second per shard."
  namespace           = local.metric_namespace
  metric_name         = local.flink_metrics.millis_behind_latest
  dimensions          = { cluster = var.name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 3
  datapoints_to_alarm = 3
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.iterator_age_alarm_minutes * 60 * 1000
  treat_missing_data  = "notBreaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
}

# The consumers of the stream (version N, a replay) share each shard's 5 GetRecords calls and 2 MB
# per second: sustained throttling means they ask for more than that (README, "GetRecords budget").
# Only the instance that owns the stream alarms on it.
resource "aws_cloudwatch_metric_alarm" "read_throttled" {
  count               = local.create_stream ? 1 : 0
  alarm_name          = "${var.name}-stream-read-throttled"
  alarm_description   = "GetRecords on ${local.stream_name} was throttled in each of the last 5 minutes: its consumers exceed 5 calls or 2 MB per second per shard. Lengthen shard_poll_interval_ms of the consumers (their sum of 1000 / interval must stay within 5), or add shards."
  namespace           = "AWS/Kinesis"
  metric_name         = "ReadProvisionedThroughputExceeded"
  dimensions          = { StreamName = local.stream_name }
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 5
  datapoints_to_alarm = 5
  comparison_operator = "GreaterThanThreshold"
  threshold           = 0
  # Kinesis writes a datapoint only for a minute with calls: none, none throttled.
  treat_missing_data = "notBreaching"
  alarm_actions      = [local.alarm_topic_arn]
}

# One page per consumer: its own lag beside the stream's (the oldest of all consumers), the stream's
# throttling, and what the sink did: parts collapsed (a restart's recomputed windows, charted here
# instead of paging), divergences, the completion pointer and the dead letters.
locals {
  dashboard_widgets = [
    {
      title = "${var.name} (v${var.job_version}): milliseconds behind the stream"
      stat  = "Maximum"
      metrics = [
        [local.metric_namespace, local.flink_metrics.millis_behind_latest, "cluster", var.name, { label = "this job's readers" }],
        ["AWS/Kinesis", "GetRecords.IteratorAgeMilliseconds", "StreamName", local.stream_name, { label = "the stream, oldest of all consumers" }],
      ]
    },
    {
      title = "${local.stream_name}: GetRecords calls throttled, records read"
      stat  = "Sum"
      metrics = [
        ["AWS/Kinesis", "ReadProvisionedThroughputExceeded", "StreamName", local.stream_name],
        ["AWS/Kinesis", "GetRecords.Records", "StreamName", local.stream_name, { yAxis = "right" }],
      ]
    },
    {
      title  = "${var.name}: parts collapsed into existing objects (a restart recomputing; no page), divergences"
      stat   = "Sum"
      period = 300
      metrics = [
        [local.metric_namespace, "PartsCollapsed", { label = "parts collapsed in 5 minutes" }],
        [local.metric_namespace, "Divergences", { label = "divergences (paged)" }],
      ]
    },
    {
      title = "${var.name}: completion pointer, dead letters per minute"
      stat  = "Maximum"
      metrics = [
        [local.metric_namespace, local.flink_metrics.complete_through, "cluster", var.name, { id = "pointer", visible = false }],
        [{ expression = "(EPOCH(pointer) * 1000 - pointer) / 60000", label = "minutes the pointer is behind now", id = "behind" }],
        [local.metric_namespace, local.dead_letter_rate_metric, "cluster", var.name, { id = "letters", visible = false }],
        [{ expression = "letters * 60", label = "dead letters per minute", id = "per_minute", yAxis = "right" }],
      ]
    },
  ]
}

resource "aws_cloudwatch_dashboard" "consumer" {
  dashboard_name = var.name
  # Two widgets a row, each a minute a point unless it says otherwise.
  dashboard_body = jsonencode({
    widgets = [for i, w in local.dashboard_widgets : {
      type       = "metric", x = (i % 2) * 12, y = floor(i / 2) * 6, width = 12, height = 6
      properties = merge({ region = local.region, period = 60 }, w)
    }]
  })
}

# A part that collapsed into an existing object is work started more than once: a restart that
# re-committed its checkpoint's parts (normal: the design absorbs restarts so), or a second instance
# of the job. Counted and charted (the dashboard), not alarmed on. The committer logs one
# "Collapsed <key> into the existing object" line per increment of its partsCollapsed counter; the
# log is what is counted here, because the counter itself is one series per committer subtask that
# starts again from 0 at every restart: CloudWatch can neither sum its increases over subtasks it
# does not know of, nor tell "> 0" for a new collapse from an old one.
resource "aws_cloudwatch_log_metric_filter" "collapsed" {
  name           = "${var.name}-collapsed"
  log_group_name = aws_cloudwatch_log_group.flink["taskmanager"].name
  pattern        = "\"Collapsed\" \"into the existing object\""
  metric_transformation {
    name          = "PartsCollapsed"
    namespace     = local.metric_namespace
    value         = "1"
    default_value = "0"
  }
}


# The alarm gained a count (var.metrics): it now reads the job's own metric.
moved {
  from = aws_cloudwatch_metric_alarm.stream_lag
  to   = aws_cloudwatch_metric_alarm.stream_lag[0]
}

# Records the job cannot read become dead letters (kept under _deadletter/). A few are a producer's
# slip; a steady rate is a producer that sends what the job cannot read, and data missing from the
# snapshots. The rate is the dead letters' assembler's input (metric_relabel_configs, main.tf).
resource "aws_cloudwatch_metric_alarm" "dead_letters" {
  count             = var.metrics ? 1 : 0
  alarm_name        = "${var.name}-dead-letters"
  alarm_description = "More than ${var.dead_letter_alarm_per_minute} records a minute became dead letters in each of the last ${var.dead_letter_alarm_minutes} minutes: a producer sends what the job cannot read, and those records are not in the snapshots. 'snapshots audit' counts them by reason; they are under _deadletter/ in the store."
  namespace         = local.metric_namespace
  metric_name       = local.dead_letter_rate_metric
  dimensions        = { cluster = var.name }
  # A per-second rate over the last minute, from the one subtask that assembles them (one bucket).
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = var.dead_letter_alarm_minutes
  datapoints_to_alarm = var.dead_letter_alarm_minutes
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.dead_letter_alarm_per_minute / 60
  # The rate has a datapoint only once a dead letter has passed (Flink registers the operator's
  # metric with the job; a job without dead letters has none), and a silent JobManager is the
  # job-not-running alarm's case.
  treat_missing_data = "notBreaching"
  alarm_actions      = [local.alarm_topic_arn]
  ok_actions         = [local.alarm_topic_arn]
}

# The collapsed-parts alarm of earlier versions paged on how the design absorbs every restart.
removed {
  from = aws_cloudwatch_metric_alarm.collapsed
  lifecycle {
    destroy = true
  }
}

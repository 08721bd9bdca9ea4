# Alarms: a deployment that failed, a deployment that hangs IN_PROGRESS (the circuit breaker counts
# failed launches, not time, so it never fires on a hang), a job that is not running, restarts in a
# loop, checkpoints that stopped, a reader falling behind the stream, work done twice (collapsed
# parts), and any divergence the sink reports.

resource "aws_sns_topic" "alarms" {
  count = var.alarm_topic_arn == "" ? 1 : 0
  name  = "${var.name}-alarms"
  tags  = var.tags
}

data "aws_iam_policy_document" "alarm_topic" {
  count = var.alarm_topic_arn == "" ? 1 : 0
  statement {
    sid       = "EventsAndStepFunctionsPublish"
    actions   = ["sns:Publish"]
    resources = [aws_sns_topic.alarms[0].arn]
    principals {
      type        = "Service"
      identifiers = ["events.amazonaws.com", "cloudwatch.amazonaws.com"]
    }
  }
}

resource "aws_sns_topic_policy" "alarms" {
  count  = var.alarm_topic_arn == "" ? 1 : 0
  arn    = aws_sns_topic.alarms[0].arn
  policy = data.aws_iam_policy_document.alarm_topic[0].json
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
        Resource = "arn:aws:states:::aws-sdk:ecs:describeServices"
        Parameters = {
          Cluster      = aws_ecs_cluster.this.arn
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
        Resource = "arn:aws:states:::sns:publish"
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

data "aws_iam_policy_document" "assume_states" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["states.amazonaws.com", "events.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "deployment_watch" {
  name_prefix        = "${var.name}-watch-"
  assume_role_policy = data.aws_iam_policy_document.assume_states.json
  tags               = var.tags
}

data "aws_iam_policy_document" "deployment_watch" {
  statement {
    sid       = "DescribeOwnServices"
    actions   = ["ecs:DescribeServices"]
    resources = [for s in aws_ecs_service.flink : s.id]
  }
  statement {
    sid       = "Alarm"
    actions   = ["sns:Publish"]
    resources = [local.alarm_topic_arn]
  }
  statement {
    sid       = "StartWatch"
    actions   = ["states:StartExecution"]
    resources = [aws_sfn_state_machine.deployment_watch.arn]
  }
}

resource "aws_iam_role_policy" "deployment_watch" {
  name   = "deployment-watch"
  role   = aws_iam_role.deployment_watch.id
  policy = data.aws_iam_policy_document.deployment_watch.json
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
  treat_missing_data  = "notBreaching"
  alarm_actions       = [local.alarm_topic_arn]
}

# --- The job's health, from Flink's own metrics (the metrics sidecar, main.tf) ----------------------

# Not RUNNING (created, restarting, failing, suspended), or no JobManager reporting at all.
resource "aws_cloudwatch_metric_alarm" "job_not_running" {
  count               = var.metrics ? 1 : 0
  alarm_name          = "${var.name}-job-not-running"
  alarm_description   = "The job has not been RUNNING for ${var.job_down_alarm_minutes} minutes, or the JobManager reports nothing. Check the JobManager's log (/ecs/${var.name}/jobmanager) and 'snapshots submit' in it."
  namespace           = local.metric_namespace
  metric_name         = local.flink_metrics.running_time
  dimensions          = { cluster = var.name }
  statistic           = "Minimum"
  period              = 60
  evaluation_periods  = var.job_down_alarm_minutes
  datapoints_to_alarm = var.job_down_alarm_minutes
  comparison_operator = "LessThanThreshold"
  threshold           = 1
  treat_missing_data  = "breaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
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

# Checkpoints bound what a restart redoes and carry the committables: none completing means the
# sink publishes nothing and the next restart goes back further. The id carries on across
# JobManagers; a minute without a higher one is a minute without a completed checkpoint.
resource "aws_cloudwatch_metric_alarm" "checkpoints_stalled" {
  count               = var.metrics ? 1 : 0
  alarm_name          = "${var.name}-checkpoints-stalled"
  alarm_description   = "No checkpoint completed for ${var.checkpoint_alarm_minutes} minutes. Check the failed checkpoints (REST /jobs/<id>/checkpoints), the JobManager's log, S3 access to the checkpoint prefix and backpressure."
  evaluation_periods  = var.checkpoint_alarm_minutes
  datapoints_to_alarm = var.checkpoint_alarm_minutes
  comparison_operator = "LessThanOrEqualToThreshold"
  threshold           = 0
  treat_missing_data  = "breaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
  metric_query {
    id = "checkpoint"
    metric {
      namespace   = local.metric_namespace
      metric_name = local.flink_metrics.last_checkpoint_id
      dimensions  = { cluster = var.name }
      stat        = "Maximum"
      period      = 60
    }
  }
  metric_query {
    id          = "completed"
    expression  = "DIFF(checkpoint)"
    label       = "Checkpoints completed in the minute"
    return_data = true
  }
}

# --- The stream and the output -----------------------------------------------------------------

# How far behind the newest record the job reads. Nobody reading at all (no GetRecords, no datapoints)
# is as bad as reading late.
resource "aws_cloudwatch_metric_alarm" "stream_lag" {
  alarm_name          = "${var.name}-stream-lag"
  alarm_description   = "The job reads ${aws_kinesis_stream.events.name} more than ${var.iterator_age_alarm_minutes} minutes behind, or not at all. Past the stream's retention (${var.kinesis_retention_hours} h) unread records are lost."
  namespace           = "AWS/Kinesis"
  metric_name         = "GetRecords.IteratorAgeMilliseconds"
  dimensions          = { StreamName = aws_kinesis_stream.events.name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 3
  datapoints_to_alarm = 3
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.iterator_age_alarm_minutes * 60 * 1000
  treat_missing_data  = "breaching"
  alarm_actions       = [local.alarm_topic_arn]
  ok_actions          = [local.alarm_topic_arn]
}

# A part that collapsed into an existing object is work started more than once: a restart that
# re-committed its checkpoint's parts, or a second instance of the job. The committer logs one
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

resource "aws_cloudwatch_metric_alarm" "collapsed" {
  alarm_name          = "${var.name}-parts-collapsed"
  alarm_description   = "More than ${var.collapsed_parts_threshold} parts collapsed into existing objects in 5 minutes: the same windows were computed more than once (a restart from a checkpoint, or two instances of the job). Expected once after a restart; repeated, look for a second JobManager or job."
  namespace           = local.metric_namespace
  metric_name         = "PartsCollapsed"
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  comparison_operator = "GreaterThanThreshold"
  threshold           = var.collapsed_parts_threshold
  treat_missing_data  = "notBreaching"
  alarm_actions       = [local.alarm_topic_arn]
}

# Alarms: a deployment that failed, a deployment that hangs IN_PROGRESS (the circuit breaker counts
# failed launches, not time, so it never fires on a hang), and any divergence the sink reports.

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

# Values the plan would only know after apply, fixed so the tests can read what depends on them
# (the bucket's name in every S3 path, ARNs in container definitions and policies), each in the
# form AWS gives it. Data sources answer as in eu-west-1 of account 123456789012. With
# mock_provider no AWS call is made. The module writes its policies with jsonencode, so the policy
# documents the tests read are the module's own, not mocks.
#
# Resources of one type that a policy or a rule must tell apart get values of their own below
# (the roles, the log groups, the security groups); the example's mock provider reads this file
# too, and an override whose target it does not have is ignored.

mock_resource "aws_s3_bucket" {
  defaults = { bucket = "snap-bucket", arn = "arn:aws:s3:::snap-bucket", id = "snap-bucket" }
}
mock_resource "aws_kinesis_stream" {
  defaults = { arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events" }
}
mock_resource "aws_iam_role" {
  defaults = { arn = "arn:aws:iam::123456789012:role/snap-role" }
}
mock_resource "aws_sns_topic" {
  defaults = { arn = "arn:aws:sns:eu-west-1:123456789012:snap-alarms" }
}
mock_resource "aws_kms_key" {
  defaults = { arn = "arn:aws:kms:eu-west-1:123456789012:key/0b5e4c1a-1d2e-4f3a-9b8c-7d6e5f4a3b2c" }
}
mock_resource "aws_cloudwatch_log_group" {
  defaults = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:snap" }
}
mock_resource "aws_security_group" {
  defaults = { id = "sg-0123456789abcdef0" }
}
mock_resource "aws_ecs_service" {
  defaults = { id = "arn:aws:ecs:eu-west-1:123456789012:service/snap/snap" }
}
mock_resource "aws_sfn_state_machine" {
  defaults = { arn = "arn:aws:states:eu-west-1:123456789012:stateMachine:snap" }
}

mock_data "aws_region" {
  defaults = { name = "eu-west-1" }
}
mock_data "aws_partition" {
  defaults = { partition = "aws", dns_suffix = "amazonaws.com" }
}
mock_data "aws_caller_identity" {
  defaults = { account_id = "123456789012" }
}
# What GetBucketPolicy returns for a bucket with the module's write-once rule (normalized as AWS
# returns it: one action a string, condition values strings).
mock_data "aws_s3_bucket_policy" {
  defaults = {
    policy = "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"DenyUnconditionalCreates\",\"Effect\":\"Deny\",\"Principal\":\"*\",\"Action\":\"s3:PutObject\",\"NotResource\":[\"arn:aws:s3:::snap-bucket/snapshots/_staging/*\",\"arn:aws:s3:::snap-bucket/flink/*\"],\"Condition\":{\"Null\":{\"s3:if-none-match\":\"true\"},\"Bool\":{\"s3:ObjectCreationOperation\":\"true\"}}}]}"
  }
}

override_resource {
  target = aws_iam_role.task["jm"]
  values = { arn = "arn:aws:iam::123456789012:role/snap-jm-20250101000000000000000001" }
}
override_resource {
  target = aws_iam_role.task["tm"]
  values = { arn = "arn:aws:iam::123456789012:role/snap-tm-20250101000000000000000002" }
}
override_resource {
  target = aws_iam_role.task["read"]
  values = { arn = "arn:aws:iam::123456789012:role/snap-read-20250101000000000000000003" }
}
override_resource {
  target = aws_iam_role.task["ops"]
  values = { arn = "arn:aws:iam::123456789012:role/snap-ops-20250101000000000000000004" }
}
override_resource {
  target = aws_iam_role.execution
  values = { arn = "arn:aws:iam::123456789012:role/snap-exec-20250101000000000000000005" }
}
override_resource {
  target = aws_cloudwatch_log_group.flink["jobmanager"]
  values = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/jobmanager" }
}
override_resource {
  target = aws_cloudwatch_log_group.flink["taskmanager"]
  values = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/taskmanager" }
}
override_resource {
  target = aws_cloudwatch_log_group.flink["metrics"]
  values = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/metrics" }
}
override_resource {
  target = aws_cloudwatch_log_group.flink["exec"]
  values = { arn = "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/exec" }
}
override_resource {
  target = aws_security_group.flink
  values = { id = "sg-0f11c0000000000a1" }
}
override_resource {
  target = aws_security_group.operator_read
  values = { id = "sg-0eead0000000000b2" }
}

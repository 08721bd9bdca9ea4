# Values the plan would only know after apply, fixed so the tests can read what depends on them
# (the bucket's name in every S3 path, ARNs in container definitions and policies). Data sources
# answer as in eu-west-1 of account 123456789012. With mock_provider no AWS call is made.

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
# The provider still checks that a role's policy is a JSON policy; the statements themselves are
# asserted from the documents' configuration.
mock_data "aws_iam_policy_document" {
  defaults = { json = "{\"Version\":\"2012-10-17\",\"Statement\":[]}" }
}

# deploy/terraform/own-bucket holds, for a bucket and a Flink of one's own, what this module gives
# its own: the bucket policy, the lifecycle rules and the job's rights. They are the module's,
# rendered for bucket my-bucket, prefixes snapshots/ and flink/, stream my-stream and 7 days of
# retention: a change here that the files do not follow fails this test.

mock_provider "aws" {
  source          = "./tests"
  override_during = plan
}

variables {
  name                = "snap"
  vpc_id              = "vpc-1"
  subnet_ids          = ["subnet-1", "subnet-2"]
  image               = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/snapshots-job:1.0.0"
  existing_bucket     = "my-bucket"
  existing_stream_arn = "arn:aws:kinesis:eu-west-1:123456789012:stream/my-stream"
}

run "the_own_bucket_files_are_what_the_module_renders" {
  command = plan

  assert {
    condition     = jsondecode(output.bucket_setup.policy) == jsondecode(file("../../own-bucket/bucket-policy.json"))
    error_message = "own-bucket/bucket-policy.json is not the module's bucket policy: ${output.bucket_setup.policy}"
  }
  assert {
    condition     = jsondecode(output.bucket_setup.lifecycle) == jsondecode(file("../../own-bucket/lifecycle.json"))
    error_message = "own-bucket/lifecycle.json is not the module's lifecycle: ${output.bucket_setup.lifecycle}"
  }
  assert {
    condition = jsondecode(file("../../own-bucket/job-policy.json")).Statement == [
      for st in jsondecode(aws_iam_role_policy.task["jm"].policy).Statement : st
      if contains(["ListOwnPrefixes", "ListUploads", "WriteSnapshotsNeverDelete", "DeletePublishedStagingAndOldProgress", "FlinkCheckpointsAndSavepoints", "ReadTheStream"], st.Sid)
    ]
    error_message = "own-bucket/job-policy.json is not the job's S3 and Kinesis rights: ${aws_iam_role_policy.task["jm"].policy}"
  }
}

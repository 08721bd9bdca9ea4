# The module's properties, asserted from Terraform's own plan (terraform test, mocked AWS provider):
# what DeployFilesITCase reads from the parsed files, here as Terraform evaluates it.
# Run: terraform init -backend=false && terraform test  (TerraformITCase does, where terraform and
# the AWS provider are installed).

mock_provider "aws" {
  source          = "./tests"
  override_during = plan
}

variables {
  name       = "snap"
  vpc_id     = "vpc-1"
  subnet_ids = ["subnet-1", "subnet-2"]
  image      = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/snapshots-job:1.0.0"
}

run "services_deploy_without_overlap_or_gaps" {
  command = plan

  assert {
    condition = (aws_ecs_service.flink["jobmanager"].desired_count == 1
      && aws_ecs_service.flink["jobmanager"].deployment_minimum_healthy_percent == 0
    && aws_ecs_service.flink["jobmanager"].deployment_maximum_percent == 100)
    error_message = "The JobManager service must run one task and stop the old one before starting the new one (0 % / 100 %)."
  }
  assert {
    condition = (aws_ecs_service.flink["taskmanager"].desired_count == 3
      && aws_ecs_service.flink["taskmanager"].deployment_minimum_healthy_percent == 100
    && aws_ecs_service.flink["taskmanager"].deployment_maximum_percent == 200)
    error_message = "TaskManagers: taskmanager_count + spare_taskmanagers tasks, replacements started first (100 % / 200 %)."
  }
  assert {
    condition     = alltrue([for s in aws_ecs_service.flink : s.deployment_circuit_breaker[0].enable && s.deployment_circuit_breaker[0].rollback && s.launch_type == "FARGATE" && !s.network_configuration[0].assign_public_ip])
    error_message = "Both services: Fargate, no public IP, the circuit breaker rolling back."
  }
  assert {
    condition     = alltrue([for k, d in aws_ecs_task_definition.flink : alltrue([for c in jsondecode(d.container_definitions) : c.stopTimeout == 120 if contains(["jobmanager", "taskmanager", "protect"], c.name)])])
    error_message = "The JobManager, TaskManager and protect containers get 120 s between SIGTERM and SIGKILL."
  }
}

run "no_rule_opens_the_rest_api_to_an_address_range" {
  command = plan

  assert {
    condition = alltrue([for r in concat(values(aws_vpc_security_group_ingress_rule.flink), values(aws_vpc_security_group_egress_rule.flink)) :
    r.referenced_security_group_id == "sg-0f11c0000000000a1" && r.security_group_id == "sg-0f11c0000000000a1" && r.cidr_ipv4 == null && r.cidr_ipv6 == null && r.prefix_list_id == null])
    error_message = "Flink's ports are open between the members of the tasks' group only: no rule opens one (8081 among them) to an address range."
  }
  assert {
    condition     = length(aws_vpc_security_group_ingress_rule.operator_rest) == 0
    error_message = "No operator ingress to 8081 unless operator_security_group_ids names some."
  }
  assert {
    condition     = toset([for r in aws_vpc_security_group_ingress_rule.flink : r.from_port]) == toset([6121, 6122, 6123, 6124, 6125, 8081]) && toset([for r in aws_vpc_security_group_egress_rule.flink : r.from_port]) == toset([6121, 6122, 6123, 6124, 6125, 8081])
    error_message = "Flink's ports, the fixed metrics query port (6125) among them, are open within the group, both ways."
  }
  assert {
    condition     = alltrue([for r in concat(values(aws_vpc_security_group_ingress_rule.flink), values(aws_vpc_security_group_egress_rule.flink)) : r.from_port == r.to_port && r.ip_protocol == "tcp"])
    error_message = "One port a rule: no range that opens more than Flink uses."
  }
  assert {
    condition     = length(aws_security_group.flink.ingress) == 0 && length(aws_security_group.flink.egress) == 0 && length(aws_security_group.operator_read.ingress) == 0 && length(aws_security_group.operator_read.egress) == 0
    error_message = "Rules are resources of their own, never inline blocks."
  }
}

run "operator_ingress_is_a_security_group_reference" {
  command = plan
  variables {
    operator_security_group_ids = ["sg-0bastion00000000"]
  }

  assert {
    condition = alltrue([for r in aws_vpc_security_group_ingress_rule.operator_rest :
    r.referenced_security_group_id == "sg-0bastion00000000" && r.cidr_ipv4 == null && r.cidr_ipv6 == null && r.from_port == 8081 && r.to_port == 8081])
    error_message = "Operator access to 8081 is a reference to the operator's security group, never an address range."
  }
  assert {
    condition     = length(aws_vpc_security_group_ingress_rule.operator_rest) == 1
    error_message = "One rule per operator security group."
  }
}

run "flink_is_configured_for_fargate" {
  command = plan

  assert {
    condition = alltrue([for line in [
      "metrics.internal.query-service.port: 6125",
      "presto.s3.endpoint: https://s3.eu-west-1.amazonaws.com",
      "s3.use-instance-credentials: false",
      "taskmanager.registration.timeout: 590s",
      "state.checkpoints.num-retained: 3",
      "execution.checkpointing.externalized-checkpoint-retention: RETAIN_ON_CANCELLATION",
    ] : contains(split("\n", { for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["FLINK_PROPERTIES"]), line)])
    error_message = "FLINK_PROPERTIES: the fixed query port, the regional S3 endpoint, the task role's credentials, a registration timeout of twice the JobManager replacement budget (295 s), retained checkpoints."
  }
  assert {
    condition     = !strcontains({ for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["FLINK_PROPERTIES"], "state.checkpoints.dir")
    error_message = "The JobManager's checkpoint directory comes from the entrypoint, per incarnation."
  }
  assert {
    condition = ({ for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_JOB_ARGS"]
    == "--source kinesis --stream-arn arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events --store s3://snap-bucket/snapshots --region eu-west-1 --pipeline telemetry --job-version 1 --checkpoint-interval 10s --shard-poll-interval 200ms ")
    error_message = "The job's flags name the stream, the store, the version, the checkpoint interval and the poll interval."
  }
  assert {
    condition     = !contains([for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name], "SNAPSHOTS_FROM_SAVEPOINT")
    error_message = "No savepoint unless from_savepoint is set."
  }
  assert {
    condition     = [for c in jsondecode(aws_ecs_task_definition.flink["taskmanager"].container_definitions) : c.image if c.name == "metrics"][0] == "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:1.300071.0b1720-amd64@sha256:f5680928b37cd5afacb5fd3de1b7ef7bfba57976f4f8b4227b49615467460cf2"
    error_message = "The CloudWatch agent's image is pinned by digest."
  }
}

run "the_job_not_running_alarm_waits_out_a_jobmanager_replacement" {
  command = plan

  assert {
    condition     = local.jobmanager_replacement_budget_seconds == 295
    error_message = "Budget: stop 60 + task start 60 + image pull 60 + JVM 15 + Cloud Map 25 + submit 15 + quiet wait 30 + restore 30 s."
  }
  assert {
    condition     = local.jobmanager_replacement_worst_seconds == 385
    error_message = "Worst case: the budget, the old task's stop up to its stopTimeout (120 s, 60 over), and the TaskManagers' JVM DNS cache (30 s over Cloud Map's TTL)."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.job_not_running[0].evaluation_periods == 8 && aws_cloudwatch_metric_alarm.job_not_running[0].datapoints_to_alarm == 8
    error_message = "Eight minutes: the worst case in whole minutes (7) plus one; 185 s of slack over the budget."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.job_not_running[0].evaluation_periods * aws_cloudwatch_metric_alarm.job_not_running[0].period > local.jobmanager_replacement_worst_seconds
    error_message = "The alarm must not fire during a routine replacement, even its slowest."
  }
  assert {
    condition = (aws_cloudwatch_metric_alarm.job_not_running[0].treat_missing_data == "missing"
    && aws_cloudwatch_metric_alarm.job_not_running[0].insufficient_data_actions == toset(["arn:aws:sns:eu-west-1:123456789012:snap-alarms"]))
    error_message = "Before the first JobManager reports (a first deploy) the alarm stays INSUFFICIENT_DATA, its initial state, and pages nobody; a JobManager silent for the whole range afterwards pages (the transition to INSUFFICIENT_DATA)."
  }
}

run "alarms_page_for_trouble_only" {
  command = plan

  assert {
    condition = (aws_cloudwatch_metric_alarm.stream_lag[0].namespace == "Snapshots/snap"
      && aws_cloudwatch_metric_alarm.stream_lag[0].metric_name == "flink_taskmanager_job_task_operator_millisBehindLatest"
      && aws_cloudwatch_metric_alarm.stream_lag[0].dimensions.cluster == "snap"
    && aws_cloudwatch_metric_alarm.stream_lag[0].threshold == 600000)
    error_message = "The lag alarm reads this job's own readers (millisBehindLatest), not the stream's oldest consumer."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.read_throttled[0].metric_name == "ReadProvisionedThroughputExceeded"
    error_message = "The stream's owner alarms on sustained read throttling (the shared GetRecords budget)."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.stalled["checkpoints"].evaluation_periods == 10 && aws_cloudwatch_metric_alarm.stalled["checkpoints"].treat_missing_data == "notBreaching" && toset([for q in aws_cloudwatch_metric_alarm.stalled["checkpoints"].metric_query : try(q.metric[0].metric_name, q.expression)]) == toset(["flink_jobmanager_job_lastCompletedCheckpointId", "DIFF(value)"])
    error_message = "Checkpoints stalled for 10 minutes while the job reports; a silent JobManager is the job-not-running alarm's page, not a second one."
  }
  assert {
    condition = (toset([for q in aws_cloudwatch_metric_alarm.stalled["pointer"].metric_query : try(q.metric[0].metric_name, q.expression)]) == toset(["flink_taskmanager_job_task_operator_completeThroughMillis", "DIFF(value)"])
      && aws_cloudwatch_metric_alarm.stalled["pointer"].evaluation_periods == 30 && aws_cloudwatch_metric_alarm.stalled["pointer"].datapoints_to_alarm == 30
    && aws_cloudwatch_metric_alarm.stalled["pointer"].comparison_operator == "LessThanOrEqualToThreshold" && aws_cloudwatch_metric_alarm.stalled["pointer"].alarm_name == "snap-pointer-stalled")
    error_message = "A completion pointer that has not moved for 30 minutes pages."
  }
  assert {
    condition = (aws_cloudwatch_metric_alarm.dead_letters[0].metric_name == "snapshots_deadLetters_perSecond" && aws_cloudwatch_metric_alarm.dead_letters[0].threshold == 1
    && aws_cloudwatch_metric_alarm.dead_letters[0].evaluation_periods == 10 && aws_cloudwatch_metric_alarm.dead_letters[0].datapoints_to_alarm == 10)
    error_message = "Dead letters above 60 a minute for 10 minutes page: a rate, not one bad record."
  }
  assert {
    condition     = strcontains(local.prometheus_scrape_config, "flink_taskmanager_job_task_operator_numRecordsInPerSecond;dead-letter-parts") && strcontains(local.cloudwatch_agent_config, "^snapshots_deadLetters_perSecond$")
    error_message = "The dead-letter rate is the dead letters' assembler's input rate, renamed, kept and published."
  }
  assert {
    condition     = aws_cloudwatch_log_metric_filter.collapsed.pattern == "\"Collapsed\" \"into the existing object\"" && strcontains(aws_cloudwatch_dashboard.consumer.dashboard_body, "PartsCollapsed")
    error_message = "Collapsed parts are counted and charted."
  }
  assert {
    condition     = length([for a in [aws_cloudwatch_metric_alarm.divergence] : a if a.metric_name == "PartsCollapsed"]) == 0 && !strcontains(jsonencode([for a in concat(aws_cloudwatch_metric_alarm.job_not_running, aws_cloudwatch_metric_alarm.stream_lag, values(aws_cloudwatch_metric_alarm.stalled), aws_cloudwatch_metric_alarm.job_restarting, aws_cloudwatch_metric_alarm.dead_letters, [aws_cloudwatch_metric_alarm.divergence]) : [a.metric_name, a.metric_query]]), "PartsCollapsed")
    error_message = "No alarm reads the collapsed parts: a restart's recomputed windows page nobody."
  }
  assert {
    condition     = strcontains(aws_cloudwatch_log_metric_filter.divergence.pattern, "DIVERGENCE at") && aws_cloudwatch_metric_alarm.divergence.threshold == 0
    error_message = "Any divergence alarms."
  }
  assert {
    condition     = alltrue([for a in concat(aws_cloudwatch_metric_alarm.job_not_running, aws_cloudwatch_metric_alarm.stream_lag, values(aws_cloudwatch_metric_alarm.stalled), aws_cloudwatch_metric_alarm.job_restarting, aws_cloudwatch_metric_alarm.dead_letters, [aws_cloudwatch_metric_alarm.divergence]) : contains(a.alarm_actions, "arn:aws:sns:eu-west-1:123456789012:snap-alarms")])
    error_message = "Every alarm goes to the topic."
  }
  assert {
    condition     = alltrue([for a in concat(aws_cloudwatch_metric_alarm.stream_lag, values(aws_cloudwatch_metric_alarm.stalled), aws_cloudwatch_metric_alarm.job_restarting, aws_cloudwatch_metric_alarm.dead_letters, aws_cloudwatch_metric_alarm.read_throttled, [aws_cloudwatch_metric_alarm.divergence]) : a.treat_missing_data == "notBreaching"])
    error_message = "No alarm but job-not-running pages for missing data."
  }
}

run "the_bucket_expires_churn_but_never_snapshots" {
  command = plan

  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.snapshots[0].rule : r.abort_incomplete_multipart_upload[0].days_after_initiation if r.id == "abort-incomplete-multipart-uploads"] == [1]
    error_message = "Incomplete multipart uploads are aborted after a day."
  }
  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.snapshots[0].rule : r.expiration[0].days if r.id == "expire-staged-copies"] == [8] && [for r in aws_s3_bucket_lifecycle_configuration.snapshots[0].rule : r.filter[0].prefix if r.id == "expire-staged-copies"] == ["snapshots/_staging/"]
    error_message = "Staged copies expire after the stream's retention (7 days) plus one."
  }
  assert {
    condition     = [for r in aws_s3_bucket_lifecycle_configuration.snapshots[0].rule : r.noncurrent_version_expiration[0].noncurrent_days if r.id == "expire-checkpoint-churn"] == [1] && [for r in aws_s3_bucket_lifecycle_configuration.snapshots[0].rule : r.filter[0].prefix if r.id == "expire-checkpoint-churn"] == ["flink/"]
    error_message = "Subsumed checkpoints' old versions go after a day."
  }
  assert {
    condition     = toset([for r in aws_s3_bucket_lifecycle_configuration.snapshots[0].rule : r.id]) == toset(["abort-incomplete-multipart-uploads", "expire-staged-copies", "expire-noncurrent-versions", "expire-conformance-probes", "expire-collapse-records", "expire-checkpoint-churn"])
    error_message = "No other rule: snapshots never expire unless expire_prefix says so."
  }
  assert {
    condition = ([for st in jsondecode(aws_s3_bucket_policy.snapshots[0].policy).Statement : st.Condition if st.Sid == "DenyUnconditionalCreates"][0]
    == { Null = { "s3:if-none-match" = "true" }, Bool = { "s3:ObjectCreationOperation" = "true" } })
    error_message = "Objects are created with If-None-Match only; CreateMultipartUpload and UploadPart, which carry no condition, are judged at CompleteMultipartUpload."
  }
  assert {
    condition = (toset([for st in jsondecode(aws_s3_bucket_policy.snapshots[0].policy).Statement : st.NotResource if st.Sid == "DenyUnconditionalCreates"][0]) == toset([
      "arn:aws:s3:::snap-bucket/snapshots/_staging/*",
      "arn:aws:s3:::snap-bucket/flink/*",
      "arn:aws:s3:::snap-bucket/snapshots/*/_progress.json",
      "arn:aws:s3:::snap-bucket/snapshots/*/_current.json",
    ]))
    error_message = "Exempt from write-once: the staged copies, Flink's state, and the two pointers, which move by compare-and-swap."
  }
  assert {
    condition     = aws_s3_bucket_versioning.snapshots[0].versioning_configuration[0].status == "Enabled"
    error_message = "The bucket is versioned."
  }
  assert {
    condition     = [for st in jsondecode(aws_s3_bucket_policy.snapshots[0].policy).Statement : st.Sid] == ["DenyInsecureTransport", "DenyUnconditionalCreates", "DenyBlindPointerWrites"]
    error_message = "The bucket policy: TLS only, write-once, pointers by compare-and-swap."
  }
}

run "operators_reach_the_job_through_one_off_tasks" {
  command = plan

  assert {
    condition     = alltrue([for t in aws_ecs_task_definition.operator : jsondecode(t.container_definitions)[0].entryPoint == ["java", "-cp", "/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar", "dev.snapshots.cli.Cli"] && jsondecode(t.container_definitions)[0].image == var.image])
    error_message = "Both operator tasks run the command line of the job's image."
  }
  assert {
    condition     = strcontains(output.snapshots_function, "aws ecs run-task --cluster snap --task-definition \"$definition\"") && strcontains(output.snapshots_function, "securityGroups=[$group]") && strcontains(output.snapshots_function, "subnets=[subnet-1,subnet-2]")
    error_message = "The output prints the run-task command, in the cluster's subnets."
  }
  assert {
    condition     = strcontains(output.snapshots_function, "definition=snap-snapshots group=sg-0f11c0000000000a1") && strcontains(output.snapshots_function, "definition=snap-snapshots-read group=sg-0eead0000000000b2")
    error_message = "The lifecycle task runs in the cluster's security group, the read-only one in its own."
  }
}

run "a_replay_beside_version_n_uses_its_stream_bucket_and_cluster" {
  command = plan
  variables {
    name                   = "snap-replay"
    job_version            = 2
    from_savepoint         = "s3://snap-bucket/flink/checkpoints/jm-1/abc/savepoints/savepoint-abc-1"
    existing_stream_arn    = "arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events"
    existing_bucket        = "snap-bucket"
    existing_cluster_name  = "snap"
    shard_poll_interval_ms = 400
  }

  assert {
    condition     = length(aws_s3_bucket.snapshots) == 0 && length(aws_kinesis_stream.events) == 0 && length(aws_ecs_cluster.this) == 0
    error_message = "Given ones are used, not created."
  }
  assert {
    condition     = length(aws_s3_bucket_lifecycle_configuration.snapshots) == 0 && length(aws_s3_bucket_policy.snapshots) == 0
    error_message = "The bucket's owner keeps its policy and lifecycle: a second instance would overwrite them."
  }
  assert {
    condition     = alltrue([for s in aws_ecs_service.flink : s.cluster == "arn:aws:ecs:eu-west-1:123456789012:cluster/snap"])
    error_message = "The services run in the given cluster."
  }
  assert {
    condition     = { for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_FROM_SAVEPOINT"] == var.from_savepoint
    error_message = "from_savepoint reaches the entrypoint."
  }
  assert {
    condition     = strcontains({ for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_JOB_ARGS"], "--stream-arn arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events --store s3://snap-bucket/snapshots --region eu-west-1 --pipeline telemetry --job-version 2 --checkpoint-interval 10s --shard-poll-interval 400ms")
    error_message = "Version 2 reads the given stream into the given bucket at half the GetRecords rate."
  }
  assert {
    condition     = aws_cloudwatch_metric_alarm.stream_lag[0].dimensions.cluster == "snap-replay" && length(aws_cloudwatch_metric_alarm.read_throttled) == 0
    error_message = "The replay has a lag alarm of its own; the stream's owner alarms on throttling."
  }
  assert {
    condition     = [for st in jsondecode(aws_iam_role_policy.task["tm"].policy).Statement : st.Resource if st.Sid == "ReadTheStream"][0] == ["arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events"]
    error_message = "The task roles read the given stream."
  }
  assert {
    condition = ([for st in jsondecode(aws_iam_role_policy.task["tm"].policy).Statement : st if st.Sid == "OwnServiceScaleInProtection"][0] == {
      Sid      = "OwnServiceScaleInProtection"
      Effect   = "Allow"
      Action   = ["ecs:GetTaskProtection", "ecs:UpdateTaskProtection"]
      Resource = ["arn:aws:ecs:eu-west-1:123456789012:task/snap/*"]
      Condition = {
        ArnEquals    = { "ecs:cluster" = "arn:aws:ecs:eu-west-1:123456789012:cluster/snap" }
        StringEquals = { "aws:ResourceTag/snapshots:service" = "snap-replay-taskmanager" }
      }
    })
    error_message = "In version N's cluster, the replay's protect sidecars may protect the replay's TaskManager tasks only, not N's."
  }
}

run "an_alarm_within_the_slowest_replacement_is_refused" {
  command = plan
  variables {
    job_down_alarm_minutes = 6
  }
  expect_failures = [aws_cloudwatch_metric_alarm.job_not_running]
}

run "an_unpinned_agent_image_is_refused" {
  command = plan
  variables {
    cloudwatch_agent_image = "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:latest"
  }
  expect_failures = [var.cloudwatch_agent_image]
}

run "an_agent_image_by_version_tag_alone_is_refused" {
  command = plan
  variables {
    cloudwatch_agent_image = "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:1.300062.0b1304"
  }
  expect_failures = [var.cloudwatch_agent_image]
}

run "an_address_range_for_the_rest_api_is_refused" {
  command = plan
  variables {
    operator_security_group_ids = ["10.0.0.0/8"]
  }
  expect_failures = [var.operator_security_group_ids]
}

run "the_checkpoint_alarm_must_outlast_three_intervals" {
  command = plan
  variables {
    checkpoint_interval_seconds = 60
    checkpoint_alarm_minutes    = 2
  }
  expect_failures = [var.checkpoint_alarm_minutes]
}

run "job_args_cannot_override_what_the_module_sets" {
  command = plan
  variables {
    job_args = "--buckets 4 --checkpoint-interval 5s"
  }
  expect_failures = [var.job_args]
}

run "a_sql_script_is_the_whole_job" {
  command = plan
  variables {
    sql_script = "CREATE TABLE out (...) WITH ('connector' = 'canonical-snapshots', 'store' = 's3://snap-bucket/snapshots/orders', 'pipeline' = 'telemetry', 'job-version' = '1');\nINSERT INTO out SELECT * FROM orders;"
  }
  assert {
    condition     = { for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_SQL"] == var.sql_script
    error_message = "The JobManager's submit gets the script (SNAPSHOTS_SQL)."
  }
  assert {
    condition     = length(setintersection(["SNAPSHOTS_JOB_ARGS", "SNAPSHOTS_JAR"], [for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name])) == 0
    error_message = "With a script, no job flags and no jar of one's own."
  }
}

run "a_sql_script_that_writes_another_pipeline_is_refused" {
  command = plan
  variables {
    sql_script = "CREATE TABLE out (...) WITH ('connector' = 'canonical-snapshots', 'store' = 's3://snap-bucket/snapshots', 'pipeline' = 'orders', 'job-version' = '1');"
  }
  expect_failures = [aws_ecs_task_definition.flink]
}

run "a_jar_of_ones_own_gets_its_own_arguments" {
  command = plan
  variables {
    job_jar  = "/opt/flink/usrlib/my-job.jar"
    job_args = "--store elsewhere --window 1h"
  }
  assert {
    condition     = { for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_JAR"] == "/opt/flink/usrlib/my-job.jar"
    error_message = "The JobManager's submit runs the jar in the image (SNAPSHOTS_JAR)."
  }
  assert {
    condition = ({ for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_JOB_ARGS"]
    == "--store s3://snap-bucket/snapshots --region eu-west-1 --pipeline telemetry --job-version 1 --checkpoint-interval 10s -- --store elsewhere --window 1h")
    error_message = "The flags before -- name the job (id, audit gate); the jar's own arguments follow it, as given."
  }
}

run "no_glue_permission_without_an_iceberg_table_on_glue" {
  command = plan

  assert {
    condition     = length(flatten([for p in aws_iam_role_policy.task : [for st in jsondecode(p.policy).Statement : st.Sid if startswith(st.Sid, "Iceberg")]])) == 0
    error_message = "No role gets a Glue permission, or an Iceberg metadata delete, unless iceberg_glue_table is set."
  }
  assert {
    condition     = length(flatten([for p in aws_iam_role_policy.task : [for st in jsondecode(p.policy).Statement : [for a in st.Action : a if startswith(a, "glue:")]]])) == 0
    error_message = "No glue: action by default."
  }
}

run "an_iceberg_table_on_glue_gets_its_database_and_table_only" {
  command = plan
  variables {
    iceberg_glue_table = "analytics.payments"
  }
  # Another partition and region: the ARNs are built from them, not written for aws.
  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }
  override_data {
    target = data.aws_region.current
    values = { name = "cn-north-1" }
  }

  assert {
    condition = ({ for st in jsondecode(aws_iam_role_policy.task["jm"].policy).Statement : st.Sid => [toset(st.Action), toset(st.Resource)] if startswith(st.Sid, "Iceberg") } == {
      IcebergGlueDatabase = [toset(["glue:GetDatabase", "glue:CreateDatabase"]), toset([
        "arn:aws-cn:glue:cn-north-1:123456789012:catalog",
        "arn:aws-cn:glue:cn-north-1:123456789012:database/analytics",
      ])]
      IcebergGlueTable = [toset(["glue:GetTable", "glue:CreateTable", "glue:UpdateTable"]), toset([
        "arn:aws-cn:glue:cn-north-1:123456789012:catalog",
        "arn:aws-cn:glue:cn-north-1:123456789012:database/analytics",
        "arn:aws-cn:glue:cn-north-1:123456789012:table/analytics/payments",
      ])]
      IcebergUncommittedMetadata = [toset(["s3:DeleteObject"]), toset(["arn:aws-cn:s3:::snap-bucket/snapshots/telemetry/_iceberg/metadata/*"])]
    })
    error_message = "Flink's roles may create, load and commit that table and its database in the deployment's partition and region, and delete Iceberg's uncommitted metadata under the table's location: no wildcard, no delete of a table, no listing."
  }
  assert {
    condition     = jsondecode(aws_iam_role_policy.task["jm"].policy).Statement == [for st in jsondecode(aws_iam_role_policy.task["tm"].policy).Statement : st if st.Sid != "OwnServiceScaleInProtection"]
    error_message = "The JobManager and the TaskManagers have the same rights for Flink and the sink."
  }
  assert {
    condition     = [for st in jsondecode(aws_iam_role_policy.task["ops"].policy).Statement : [toset(st.Action), toset(st.Resource)] if st.Sid == "IcebergGluePromote"] == [[toset(["glue:GetDatabase", "glue:GetTable", "glue:UpdateTable"]), toset(["arn:aws-cn:glue:cn-north-1:123456789012:catalog", "arn:aws-cn:glue:cn-north-1:123456789012:database/analytics", "arn:aws-cn:glue:cn-north-1:123456789012:table/analytics/payments"])]]
    error_message = "promote may read and commit the table (it moves its main branch), not create one."
  }
  assert {
    condition     = length([for st in jsondecode(aws_iam_role_policy.task["read"].policy).Statement : st if startswith(st.Sid, "Iceberg")]) == 0
    error_message = "The read-only operators reach no Glue table."
  }
}

run "a_glue_table_name_glue_refuses_is_refused" {
  command = plan
  variables {
    iceberg_glue_table = "Analytics.payments-v2"
  }
  expect_failures = [var.iceberg_glue_table]
}

# The module's security properties (README, "Security"), asserted from the plan: the policies as
# the module renders them (jsonencode; nothing about a policy is mocked), the security groups'
# rules, the task definitions and the encryption settings. Mocked AWS provider, no AWS call.

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

# Each role's statements as { Sid = [actions, resources] }, compared whole: a right added, lost or
# widened anywhere fails here.
run "each_task_role_has_the_rights_of_its_duty_only" {
  command = plan

  assert {
    condition = ({ for st in jsondecode(aws_iam_role_policy.task["jm"].policy).Statement : st.Sid => [toset(st.Action), toset(st.Resource)] } == {
      ListOwnPrefixes                      = [toset(["s3:ListBucket"]), toset(["arn:aws:s3:::snap-bucket"])]
      ListUploads                          = [toset(["s3:ListBucketMultipartUploads"]), toset(["arn:aws:s3:::snap-bucket"])]
      WriteSnapshotsNeverDelete            = [toset(["s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]), toset(["arn:aws:s3:::snap-bucket/snapshots/*"])]
      DeletePublishedStagingAndOldProgress = [toset(["s3:DeleteObject"]), toset(["arn:aws:s3:::snap-bucket/snapshots/_staging/*", "arn:aws:s3:::snap-bucket/snapshots/*/_progress/*"])]
      FlinkCheckpointsAndSavepoints        = [toset(["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]), toset(["arn:aws:s3:::snap-bucket/flink/*"])]
      ReadTheStream                        = [toset(["kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords", "kinesis:GetShardIterator", "kinesis:ListShards"]), toset(["arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events"])]
      MetricsAgentWritesItsLogGroup        = [toset(["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]), toset(["arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/metrics", "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/metrics:*"])]
    })
    error_message = "The JobManager's role: the snapshots (never a delete of a part), Flink's state, the stream, and the metrics agent's own log group; nothing else. Got ${aws_iam_role_policy.task["jm"].policy}"
  }
  assert {
    condition = ([for st in jsondecode(aws_iam_role_policy.task["jm"].policy).Statement : st.Condition if st.Sid == "ListOwnPrefixes"] == [{
      StringLikeIfExists = { "s3:prefix" = ["snapshots/*", "flink/*", ""] }
    }])
    error_message = "A listing stays under the job's prefixes; a HEAD's implicit ListBucket check, which carries no prefix, is allowed (a missing key is a 404, not a 403)."
  }
  assert {
    condition = (jsondecode(aws_iam_role_policy.task["tm"].policy).Statement == concat(jsondecode(aws_iam_role_policy.task["jm"].policy).Statement, [{
      Sid      = "OwnServiceScaleInProtection"
      Effect   = "Allow"
      Action   = ["ecs:GetTaskProtection", "ecs:UpdateTaskProtection"]
      Resource = ["arn:aws:ecs:eu-west-1:123456789012:task/snap/*"]
      Condition = {
        ArnEquals    = { "ecs:cluster" = "arn:aws:ecs:eu-west-1:123456789012:cluster/snap" }
        StringEquals = { "aws:ResourceTag/snapshots:service" = "snap-taskmanager" }
      }
    }]))
    error_message = "The TaskManagers' role is the JobManager's plus the protect sidecar's task protection, on the TaskManager service's own tasks only (ECS gives roles per task, so the sidecar shares its task's)."
  }
  assert {
    condition = ({ for st in jsondecode(aws_iam_role_policy.task["read"].policy).Statement : st.Sid => [toset(st.Action), toset(st.Resource)] } == {
      ListOwnPrefixes = [toset(["s3:ListBucket"]), toset(["arn:aws:s3:::snap-bucket"])]
      ListUploads     = [toset(["s3:ListBucketMultipartUploads"]), toset(["arn:aws:s3:::snap-bucket"])]
      ReadSnapshots   = [toset(["s3:GetObject"]), toset(["arn:aws:s3:::snap-bucket/snapshots/*"])]
    })
    error_message = "The read-only operator role reads the snapshots: no write, no checkpoint, no stream."
  }
  assert {
    condition = ([for st in jsondecode(aws_iam_role_policy.task["read"].policy).Statement : st.Condition if st.Sid == "ListOwnPrefixes"] == [{
      StringLikeIfExists = { "s3:prefix" = ["snapshots/*", ""] }
    }])
    error_message = "The read-only role lists the snapshots only."
  }
  assert {
    condition = ({ for st in jsondecode(aws_iam_role_policy.task["ops"].policy).Statement : st.Sid => [toset(st.Action), toset(st.Resource)] } == {
      ListOwnPrefixes             = [toset(["s3:ListBucket"]), toset(["arn:aws:s3:::snap-bucket"])]
      ListUploads                 = [toset(["s3:ListBucketMultipartUploads"]), toset(["arn:aws:s3:::snap-bucket"])]
      ReadSnapshotsAndCheckpoints = [toset(["s3:GetObject"]), toset(["arn:aws:s3:::snap-bucket/snapshots/*", "arn:aws:s3:::snap-bucket/flink/*"])]
      PromoteAcknowledgeProbe = [toset(["s3:PutObject"]), toset([
        "arn:aws:s3:::snap-bucket/snapshots/*/_current.json",
        "arn:aws:s3:::snap-bucket/snapshots/*/promoted/*",
        "arn:aws:s3:::snap-bucket/snapshots/_audit/acknowledged/*",
        "arn:aws:s3:::snap-bucket/snapshots/_conformance/*",
      ])]
      RemoveProbesAndOldIncarnations = [toset(["s3:DeleteObject"]), toset(["arn:aws:s3:::snap-bucket/snapshots/_conformance/*", "arn:aws:s3:::snap-bucket/flink/checkpoints/*"])]
    })
    error_message = "The lifecycle role reads the store and the checkpoints, moves pointers, records acknowledgements and probes, removes old incarnations' checkpoints: no part, no stream."
  }
  assert {
    condition     = aws_ecs_task_definition.flink["jobmanager"].task_role_arn == aws_iam_role.task["jm"].arn && aws_ecs_task_definition.flink["taskmanager"].task_role_arn == aws_iam_role.task["tm"].arn && aws_ecs_task_definition.operator["read"].task_role_arn == aws_iam_role.task["read"].arn && aws_ecs_task_definition.operator["ops"].task_role_arn == aws_iam_role.task["ops"].arn
    error_message = "Each task runs with the role of its duty."
  }
  assert {
    condition     = alltrue([for k, s in aws_ecs_service.flink : s.tags["snapshots:service"] == "snap-${k}" && s.propagate_tags == "SERVICE"])
    error_message = "The services tag their tasks with the service's name, which the protection and exec rights name."
  }
  assert {
    condition     = alltrue([for r in aws_iam_role.task : jsondecode(r.assume_role_policy).Statement[0].Condition == { StringEquals = { "aws:SourceAccount" = "123456789012" }, ArnLike = { "aws:SourceArn" = "arn:aws:ecs:eu-west-1:123456789012:*" } }])
    error_message = "Task roles are assumed for this account's ECS tasks only."
  }
}

run "no_statement_grants_every_action_of_a_service" {
  command = plan
  variables {
    execute_command    = true
    iceberg_glue_table = "analytics.payments"
    kms_key_arn        = "arn:aws:kms:eu-west-1:123456789012:key/1a2b3c4d-5e6f-4a5b-8c7d-9e8f7a6b5c4d"
  }

  assert {
    condition = alltrue(flatten([for doc in concat([for p in aws_iam_role_policy.task : p.policy], [aws_iam_role_policy.deployment_watch.policy, output.operator_read_policy_json, output.operator_lifecycle_policy_json]) :
    [for st in jsondecode(doc).Statement : [for a in flatten([st.Action]) : a != "*" && !endswith(a, ":*")]]]))
    error_message = "No role or operator policy allows * or a service's every action."
  }
  assert {
    condition = alltrue(flatten([for doc in concat([for p in aws_iam_role_policy.task : p.policy], [output.operator_read_policy_json, output.operator_lifecycle_policy_json]) :
      [for st in jsondecode(doc).Statement : contains(st.Resource, "*") == contains([
        "EcsExecChannels", "EcsExecFindsItsLogGroup", "FindTheJobManagerTask",
    ], st.Sid)]]))
    error_message = "A resource of * only where IAM offers nothing narrower: SSM's message channels and the log group lookup of ECS Exec, ListTasks (under an ecs:cluster condition)."
  }
}

run "operators_may_run_their_own_task_with_its_own_role_only" {
  command = plan

  assert {
    condition = ([for st in jsondecode(output.operator_read_policy_json).Statement : st if st.Sid == "RunTheOperatorTask"] == [{
      Sid      = "RunTheOperatorTask"
      Effect   = "Allow"
      Action   = ["ecs:RunTask"]
      Resource = ["arn:aws:ecs:eu-west-1:123456789012:task-definition/snap-snapshots-read:*"]
      Condition = {
        ArnEquals            = { "ecs:cluster" = "arn:aws:ecs:eu-west-1:123456789012:cluster/snap" }
        StringEqualsIfExists = { "ecs:enable-execute-command" = "false" }
      }
    }])
    error_message = "The readers run the read-only task, in this cluster, without ECS Exec."
  }
  assert {
    condition     = [for st in jsondecode(output.operator_lifecycle_policy_json).Statement : st.Resource if st.Sid == "RunTheOperatorTask"] == [["arn:aws:ecs:eu-west-1:123456789012:task-definition/snap-snapshots:*"]]
    error_message = "The lifecycle operators run the lifecycle task."
  }
  assert {
    condition = ([for st in jsondecode(output.operator_read_policy_json).Statement : st if st.Sid == "PassItsRoles"] == [{
      Sid       = "PassItsRoles"
      Effect    = "Allow"
      Action    = ["iam:PassRole"]
      Resource  = ["arn:aws:iam::123456789012:role/snap-read-20250101000000000000000003", "arn:aws:iam::123456789012:role/snap-exec-20250101000000000000000005"]
      Condition = { StringEquals = { "iam:PassedToService" = "ecs-tasks.amazonaws.com" } }
    }])
    error_message = "A run-task's role override can name no other role than the task's own (IAM has no condition key on the overrides themselves)."
  }
  assert {
    condition     = [for st in jsondecode(output.operator_lifecycle_policy_json).Statement : st.Resource if st.Sid == "PassItsRoles"] == [["arn:aws:iam::123456789012:role/snap-ops-20250101000000000000000004", "arn:aws:iam::123456789012:role/snap-exec-20250101000000000000000005"]]
    error_message = "The lifecycle operators pass the lifecycle role only."
  }
  assert {
    condition     = [for st in jsondecode(output.operator_read_policy_json).Statement : st.Resource if st.Sid == "ReadTheOperatorLog"] == [["arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/jobmanager:log-stream:snapshots/*"]]
    error_message = "Operators read the operator tasks' log streams, not the JobManager's."
  }
  assert {
    condition     = aws_ecs_task_definition.operator["read"].family == "snap-snapshots-read" && !contains([for e in jsondecode(aws_ecs_task_definition.operator["read"].container_definitions)[0].environment : e.name], "SNAPSHOTS_REST")
    error_message = "The read-only task is given no REST address."
  }
  assert {
    condition     = length([for r in concat(values(aws_vpc_security_group_ingress_rule.flink), values(aws_vpc_security_group_ingress_rule.operator_rest)) : r if r.referenced_security_group_id == aws_security_group.operator_read.id]) == 0 && aws_security_group.operator_read.id != aws_security_group.flink.id
    error_message = "The read-only task is in a group no rule of the cluster admits: it cannot reach the REST API, which would run anything for it (a cancel among it)."
  }
}

run "ecs_exec_is_off_by_default" {
  command = plan

  assert {
    condition     = alltrue([for s in aws_ecs_service.flink : !s.enable_execute_command]) && output.exec_command == null
    error_message = "No ECS Exec unless execute_command is set."
  }
  assert {
    condition     = !strcontains(join("", concat([for p in aws_iam_role_policy.task : p.policy], [output.operator_read_policy_json, output.operator_lifecycle_policy_json])), "ssmmessages") && !strcontains(output.operator_lifecycle_policy_json, "ecs:ExecuteCommand")
    error_message = "No role opens SSM's channels, no operator may call ExecuteCommand."
  }
  assert {
    condition     = length(aws_ecs_cluster.this[0].configuration) == 0 && !contains(keys(aws_cloudwatch_log_group.flink), "exec")
    error_message = "No session logging to configure."
  }
}

run "ecs_exec_when_on_logs_every_session_and_opens_the_jobmanager_only" {
  command = plan
  variables {
    execute_command = true
    exec_log_bucket = "snap-audit-logs"
  }

  assert {
    condition     = alltrue([for s in aws_ecs_service.flink : s.enable_execute_command])
    error_message = "ECS Exec into the JobManager and TaskManager tasks."
  }
  assert {
    condition = (aws_ecs_cluster.this[0].configuration[0].execute_command_configuration[0].logging == "OVERRIDE"
      && aws_ecs_cluster.this[0].configuration[0].execute_command_configuration[0].log_configuration[0].cloud_watch_log_group_name == "/ecs/snap/exec"
      && aws_ecs_cluster.this[0].configuration[0].execute_command_configuration[0].log_configuration[0].s3_bucket_name == "snap-audit-logs"
    && aws_ecs_cluster.this[0].configuration[0].execute_command_configuration[0].log_configuration[0].s3_key_prefix == "ecs-exec/snap/")
    error_message = "Every session is logged to CloudWatch Logs and S3."
  }
  assert {
    condition = ({ for st in jsondecode(aws_iam_role_policy.task["jm"].policy).Statement : st.Sid => [toset(st.Action), toset(st.Resource)] if startswith(st.Sid, "EcsExec") } == {
      EcsExecChannels                      = [toset(["ssmmessages:CreateControlChannel", "ssmmessages:CreateDataChannel", "ssmmessages:OpenControlChannel", "ssmmessages:OpenDataChannel"]), toset(["*"])]
      EcsExecFindsItsLogGroup              = [toset(["logs:DescribeLogGroups"]), toset(["*"])]
      EcsExecSessionLog                    = [toset(["logs:CreateLogStream", "logs:DescribeLogStreams", "logs:PutLogEvents"]), toset(["arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/exec", "arn:aws:logs:eu-west-1:123456789012:log-group:/ecs/snap/exec:*"])]
      EcsExecSessionLogInS3                = [toset(["s3:PutObject"]), toset(["arn:aws:s3:::snap-audit-logs/ecs-exec/snap/*"])]
      EcsExecChecksTheLogBucketsEncryption = [toset(["s3:GetEncryptionConfiguration"]), toset(["arn:aws:s3:::snap-audit-logs"])]
    })
    error_message = "The tasks open SSM's channels and write the session's log, there only."
  }
  assert {
    condition = ([for st in jsondecode(output.operator_lifecycle_policy_json).Statement : st if st.Sid == "ExecIntoTheJobManager"] == [{
      Sid       = "ExecIntoTheJobManager"
      Effect    = "Allow"
      Action    = ["ecs:ExecuteCommand"]
      Resource  = ["arn:aws:ecs:eu-west-1:123456789012:task/snap/*"]
      Condition = { StringEquals = { "ecs:container-name" = "jobmanager", "aws:ResourceTag/snapshots:service" = "snap-jobmanager" } }
    }])
    error_message = "The lifecycle operators may open a shell in the JobManager container of this instance's JobManager task only."
  }
  assert {
    condition     = !strcontains(output.operator_read_policy_json, "ecs:ExecuteCommand") && !strcontains(aws_iam_role_policy.task["read"].policy, "ssmmessages") && !strcontains(aws_iam_role_policy.task["ops"].policy, "ssmmessages")
    error_message = "Readers open no shell; the operator tasks run without ECS Exec."
  }
  assert {
    condition     = strcontains(output.exec_command, "aws ecs execute-command --cluster snap --container jobmanager")
    error_message = "The output opens a shell in the JobManager."
  }
}

run "the_tasks_reach_aws_over_https_and_each_other_on_flinks_ports_only" {
  command = plan
  variables {
    egress_https_cidr_blocks     = ["10.42.0.0/16"]
    egress_https_prefix_list_ids = ["pl-6da54004"]
  }

  assert {
    condition = (toset([for r in aws_vpc_security_group_egress_rule.https : "${r.security_group_id} ${coalesce(r.cidr_ipv4, r.prefix_list_id)} ${r.from_port}-${r.to_port}"]) == toset([
      "sg-0f11c0000000000a1 10.42.0.0/16 443-443",
      "sg-0f11c0000000000a1 pl-6da54004 443-443",
      "sg-0eead0000000000b2 10.42.0.0/16 443-443",
      "sg-0eead0000000000b2 pl-6da54004 443-443",
    ]))
    error_message = "HTTPS to the given destinations (interface endpoints in the VPC, the S3 gateway's prefix list) and nowhere else."
  }
  assert {
    condition     = toset([for r in aws_vpc_security_group_egress_rule.flink : r.from_port]) == toset([6121, 6122, 6123, 6124, 6125, 8081]) && alltrue([for r in aws_vpc_security_group_egress_rule.flink : r.referenced_security_group_id == aws_security_group.flink.id])
    error_message = "Besides HTTPS, Flink's ports to the group's own members."
  }
}

run "the_tasks_need_a_way_to_aws" {
  command = plan
  variables {
    egress_https_cidr_blocks = []
  }
  expect_failures = [var.egress_https_prefix_list_ids]
}

run "rest_tls_turns_on_mutual_tls_with_stores_from_secrets_manager" {
  command = plan
  variables {
    rest_tls = {
      keystore_secret_arn   = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/rest-keystore-AbCdEf"
      truststore_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/rest-truststore-GhIjKl"
      password_secret_arn   = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/rest-password-MnOpQr"
    }
  }

  assert {
    condition = alltrue([for k in ["jobmanager", "taskmanager"] : alltrue([for line in ["security.ssl.rest.enabled: true", "security.ssl.rest.authentication-enabled: true", "security.ssl.algorithms: TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"] :
    contains(split("\n", { for e in jsondecode(aws_ecs_task_definition.flink[k].container_definitions)[0].environment : e.name => e.value }["FLINK_PROPERTIES"]), line)])])
    error_message = "Flink's configuration turns on the REST API's TLS with mutual authentication and forward-secret ciphers, in the JobManager and the TaskManagers."
  }
  assert {
    condition = ({ for c in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions) : c.name => try(c.secrets, []) } == {
      jobmanager = [
        { name = "SNAPSHOTS_REST_KEYSTORE_BASE64", valueFrom = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/rest-keystore-AbCdEf" },
        { name = "SNAPSHOTS_REST_TRUSTSTORE_BASE64", valueFrom = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/rest-truststore-GhIjKl" },
        { name = "SNAPSHOTS_REST_TLS_PASSWORD", valueFrom = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/rest-password-MnOpQr" },
      ]
      metrics = []
    })
    error_message = "The JobManager gets the stores and their password from Secrets Manager through the task definition's secrets: their ARNs, never their values."
  }
  assert {
    condition = ({ for c in jsondecode(aws_ecs_task_definition.flink["taskmanager"].container_definitions) : c.name => try(c.secrets, []) } == {
      taskmanager = []
      protect     = jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].secrets
      metrics     = []
    } && jsondecode(aws_ecs_task_definition.operator["ops"].container_definitions)[0].secrets == jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].secrets)
    error_message = "The key material reaches what serves or calls the REST API (the JobManager, the protect sidecars, the lifecycle operator task) and nothing else: not the TaskManager's container, not the metrics agent."
  }
  assert {
    condition     = length(try(jsondecode(aws_ecs_task_definition.operator["read"].container_definitions)[0].secrets, [])) == 0
    error_message = "The read-only task gets no key."
  }
  assert {
    condition = (jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].entryPoint == concat(["bash", "-c", local.rest_tls_prelude, "snapshots-rest-tls"], ["/opt/flink/bin/snapshots-entrypoint.sh"])
      && strcontains(local.rest_tls_prelude, "security.ssl.rest.keystore: $d/keystore.p12") && strcontains(local.rest_tls_prelude, "security.ssl.rest.truststore-password: $SNAPSHOTS_REST_TLS_PASSWORD")
    && endswith(trimspace(local.rest_tls_prelude), "exec \"$@\""))
    error_message = "The JobManager writes its stores to files, adds their paths and password to Flink's configuration, then runs the image's entrypoint."
  }
  assert {
    condition = (jsondecode(aws_ecs_task_definition.operator["ops"].container_definitions)[0].entryPoint == concat(["bash", "-c", local.rest_tls_prelude, "snapshots-rest-tls"], ["java", "-cp", "/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar", "dev.snapshots.cli.Cli"])
      && { for e in jsondecode(aws_ecs_task_definition.operator["ops"].container_definitions)[0].environment : e.name => e.value }["SNAPSHOTS_REST"] == "https://jobmanager.snap.internal:8081"
    && { for e in [for c in jsondecode(aws_ecs_task_definition.flink["taskmanager"].container_definitions) : c if c.name == "protect"][0].environment : e.name => e.value }["SNAPSHOTS_REST"] == "https://jobmanager.snap.internal:8081")
    error_message = "The command line's REST calls (the lifecycle task, the protect sidecar) go to https, with the stores at hand."
  }
  assert {
    condition     = jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].healthCheck.command == ["CMD-SHELL", "bash -c '</dev/tcp/127.0.0.1/8081' || exit 1"]
    error_message = "The health check does not need the client key."
  }
  assert {
    condition     = [for st in jsondecode(aws_iam_role_policy.execution["snapshots-secrets"].policy).Statement : [st.Action, st.Resource] if st.Sid == "ReadTheContainersSecrets"] == [[["secretsmanager:GetSecretValue"], [for s in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].secrets : s.valueFrom]]]
    error_message = "ECS may read those secrets, and only those, with the execution role."
  }
}

run "the_rest_api_is_plain_http_inside_the_group_without_rest_tls" {
  command = plan

  assert {
    condition     = !strcontains(aws_ecs_task_definition.flink["jobmanager"].container_definitions, "security.ssl") && !strcontains(aws_ecs_task_definition.flink["jobmanager"].container_definitions, "secrets") && length(aws_iam_role_policy.execution) == 0
    error_message = "No TLS setting, no secret, no right to read one."
  }
  assert {
    condition     = output.jobmanager_rest == "http://jobmanager.snap.internal:8081"
    error_message = "The REST address is plain HTTP."
  }
}

run "a_sql_script_from_secrets_manager_stays_out_of_the_task_definition" {
  command = plan
  variables {
    sql_script_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/orders-sql-StUvWx"
  }

  assert {
    condition     = jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].secrets == [{ name = "SNAPSHOTS_SQL", valueFrom = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/orders-sql-StUvWx" }]
    error_message = "ECS reads the script into the JobManager's SNAPSHOTS_SQL when the task starts."
  }
  assert {
    condition     = length(setintersection(["SNAPSHOTS_SQL", "SNAPSHOTS_JOB_ARGS", "SNAPSHOTS_JAR"], [for e in jsondecode(aws_ecs_task_definition.flink["jobmanager"].container_definitions)[0].environment : e.name])) == 0
    error_message = "The script is the whole job: no environment value names it, no job flags beside it."
  }
  assert {
    condition     = [for st in jsondecode(aws_iam_role_policy.execution["snapshots-secrets"].policy).Statement : st.Resource if st.Sid == "ReadTheContainersSecrets"] == [["arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/orders-sql-StUvWx"]]
    error_message = "The execution role may read that secret only."
  }
}

run "a_secret_script_and_an_inline_one_are_refused_together" {
  command = plan
  variables {
    sql_script_secret_arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:snap/orders-sql-StUvWx"
    sql_script            = "INSERT INTO out SELECT * FROM orders;"
  }
  expect_failures = [var.sql_script_secret_arn]
}

# The size guard: an 80 KB script inline is refused with what to do; 50 KB (ECS's limit is 64 KiB
# for the whole task definition) is planned, and hidden in the plan's output.
run "an_inline_script_over_64_kib_is_refused" {
  command = plan
  variables {
    sql_script = join("\n", concat(
      ["CREATE TABLE out (...) WITH ('connector' = 'canonical-snapshots', 'store' = 's3://snap-bucket/snapshots/orders', 'pipeline' = 'telemetry', 'job-version' = '1');"],
      [for i in range(1000) : "-- a line of a long script, eighty bytes with its newline: 0123456789012345678"],
    ))
  }
  expect_failures = [aws_ecs_task_definition.flink]
}

run "an_inline_script_within_64_kib_is_planned_and_hidden" {
  command = plan
  variables {
    sql_script = join("\n", concat(
      ["CREATE TABLE out (...) WITH ('connector' = 'canonical-snapshots', 'store' = 's3://snap-bucket/snapshots/orders', 'pipeline' = 'telemetry', 'job-version' = '1');"],
      [for i in range(625) : "-- a line of a long script, eighty bytes with its newline: 0123456789012345678"],
    ))
  }

  assert {
    condition     = local.container_definitions_bytes.jobmanager > 50000 && local.container_definitions_bytes.jobmanager <= 65536
    error_message = "50 KB of script fits: ${local.container_definitions_bytes.jobmanager} bytes."
  }
  assert {
    condition     = issensitive(aws_ecs_task_definition.flink["jobmanager"].container_definitions)
    error_message = "sql_script is sensitive: the plan shows no script."
  }
}

run "the_protect_sidecar_restarts_after_a_let_go_and_spreads_its_stretches" {
  command = plan

  assert {
    condition = ([for c in jsondecode(aws_ecs_task_definition.flink["taskmanager"].container_definitions) : [c.essential, c.restartPolicy] if c.name == "protect"]
    == [[false, { enabled = true, restartAttemptPeriod = 60 }]])
    error_message = "Not essential (the TaskManager does not die with it), and restarted whatever its exit code, a let-go's 0 included: a task ECS then keeps must not run on unprotected."
  }
  assert {
    condition     = [for c in jsondecode(aws_ecs_task_definition.flink["taskmanager"].container_definitions) : c.entryPoint if c.name == "protect"] == [["bash", "-c", "exec 'java' '-cp' '/opt/flink/lib/*:/opt/snapshots/snapshots-cli.jar' 'dev.snapshots.cli.Cli' protect --rest \"$SNAPSHOTS_REST\" --max-protected-minutes $((6 + RANDOM % 5))"]]
    error_message = "Each start draws its stretch of protection between 6 and 10 minutes, so TaskManagers started together hand over at different times."
  }
}

run "the_bucket_in_use_must_be_write_once" {
  command = plan
  variables {
    name                  = "snap-replay"
    existing_bucket       = "snap-bucket"
    existing_stream_arn   = "arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events"
    existing_cluster_name = "snap"
  }
  # A bucket whose policy only asks for TLS.
  override_data {
    target = data.aws_s3_bucket_policy.in_use
    values = { policy = "{\"Version\":\"2012-10-17\",\"Statement\":[{\"Sid\":\"DenyInsecureTransport\",\"Effect\":\"Deny\",\"Principal\":\"*\",\"Action\":\"s3:*\",\"Resource\":[\"arn:aws:s3:::snap-bucket\",\"arn:aws:s3:::snap-bucket/*\"],\"Condition\":{\"Bool\":{\"aws:SecureTransport\":\"false\"}}}]}" }
  }
  expect_failures = [check.the_bucket_is_write_once]
}

run "a_bucket_with_the_write_once_rule_passes_the_check" {
  command = plan
  variables {
    name                  = "snap-replay"
    existing_bucket       = "snap-bucket"
    existing_stream_arn   = "arn:aws:kinesis:eu-west-1:123456789012:stream/snap-events"
    existing_cluster_name = "snap"
  }

  # A failed check fails the run: the mock's policy is the write-once rule as GetBucketPolicy
  # returns it, and the check reads the given bucket's.
  assert {
    condition     = local.bucket == "snap-bucket" && length(aws_s3_bucket_policy.snapshots) == 0
    error_message = "The given bucket is used, its policy left to its owner."
  }
}

run "the_alarm_topic_is_encrypted_and_admits_this_accounts_alarms_and_rules_only" {
  command = plan

  assert {
    condition = ({ for st in jsondecode(aws_sns_topic_policy.alarms[0].policy).Statement : st.Principal.Service => [st.Effect, st.Action, st.Resource, st.Condition] } == {
      for service, source in {
        "cloudwatch.amazonaws.com" = "arn:aws:cloudwatch:eu-west-1:123456789012:alarm:snap-*"
        "events.amazonaws.com"     = "arn:aws:events:eu-west-1:123456789012:rule/snap-*"
      } : service => ["Allow", "sns:Publish", "arn:aws:sns:eu-west-1:123456789012:snap-alarms", { StringEquals = { "aws:SourceAccount" = "123456789012" }, ArnLike = { "aws:SourceArn" = source } }]
    })
    error_message = "CloudWatch alarms and EventBridge rules of this account and instance may publish, nothing else (aws:SourceAccount, aws:SourceArn)."
  }
  assert {
    condition     = aws_sns_topic.alarms[0].kms_master_key_id == aws_kms_key.alarms[0].arn && aws_kms_key.alarms[0].enable_key_rotation
    error_message = "Without a key of the caller's, the topic is encrypted under a key of the module's (the AWS-managed SNS key admits no alarm)."
  }
  assert {
    condition = ([for st in jsondecode(aws_kms_key.alarms[0].policy).Statement : st if st.Sid == "AlarmsAndRulesPublish"] == [{
      Sid       = "AlarmsAndRulesPublish"
      Effect    = "Allow"
      Principal = { Service = ["cloudwatch.amazonaws.com", "events.amazonaws.com"] }
      Action    = ["kms:Decrypt", "kms:GenerateDataKey*"]
      Resource  = "*"
      Condition = { StringEquals = { "aws:SourceAccount" = "123456789012" } }
    }])
    error_message = "The topic's key lets this account's alarms and rules encrypt to it."
  }
  assert {
    condition     = [for st in jsondecode(aws_iam_role_policy.deployment_watch.policy).Statement : st.Resource if st.Sid == "EncryptForTheTopic"] == [[aws_kms_key.alarms[0].arn]]
    error_message = "The deployment watch publishes with the topic's key, that key only."
  }
  assert {
    condition     = alltrue([for g in aws_cloudwatch_log_group.flink : g.kms_key_id == null]) && aws_kinesis_stream.events[0].kms_key_id == "alias/aws/kinesis" && [for r in aws_s3_bucket_server_side_encryption_configuration.snapshots[0].rule : r.apply_server_side_encryption_by_default[0].sse_algorithm] == ["aws:kms"]
    error_message = "Without kms_key_arn: the bucket and the stream under AWS-managed keys, the log groups under CloudWatch Logs' own encryption."
  }
  assert {
    condition     = !strcontains(join("", [for p in aws_iam_role_policy.task : p.policy]), "kms:")
    error_message = "AWS-managed keys admit the account's principals through their service: no role gets a KMS right."
  }
}

run "a_customer_managed_key_encrypts_everything_and_is_granted_by_its_arn" {
  command = plan
  variables {
    kms_key_arn     = "arn:aws:kms:eu-west-1:123456789012:key/1a2b3c4d-5e6f-4a5b-8c7d-9e8f7a6b5c4d"
    execute_command = true
  }

  assert {
    condition = (alltrue([for g in aws_cloudwatch_log_group.flink : g.kms_key_id == var.kms_key_arn])
      && aws_kinesis_stream.events[0].kms_key_id == var.kms_key_arn
      && [for r in aws_s3_bucket_server_side_encryption_configuration.snapshots[0].rule : r.apply_server_side_encryption_by_default[0].kms_master_key_id] == [var.kms_key_arn]
      && aws_sns_topic.alarms[0].kms_master_key_id == var.kms_key_arn && length(aws_kms_key.alarms) == 0
    && aws_ecs_cluster.this[0].configuration[0].execute_command_configuration[0].kms_key_id == var.kms_key_arn)
    error_message = "The bucket, the stream, every log group (ECS Exec's among them), the topic and ECS Exec's sessions are under the given key."
  }
  assert {
    condition = ([for st in jsondecode(aws_iam_role_policy.task["jm"].policy).Statement : st if st.Sid == "UseTheKeyThroughS3AndKinesis"] == [{
      Sid       = "UseTheKeyThroughS3AndKinesis"
      Effect    = "Allow"
      Action    = ["kms:Decrypt", "kms:GenerateDataKey"]
      Resource  = ["arn:aws:kms:eu-west-1:123456789012:key/1a2b3c4d-5e6f-4a5b-8c7d-9e8f7a6b5c4d"]
      Condition = { StringEquals = { "kms:ViaService" = ["s3.eu-west-1.amazonaws.com", "kinesis.eu-west-1.amazonaws.com"] } }
    }])
    error_message = "Flink may use that key, by its ARN (not key/*), through S3 and Kinesis only."
  }
  assert {
    condition     = [for st in jsondecode(aws_iam_role_policy.task["read"].policy).Statement : st.Action if st.Sid == "UseTheKeyThroughS3AndKinesis"] == [["kms:Decrypt"]]
    error_message = "The readers may only decrypt."
  }
}

run "every_arn_follows_the_partition" {
  command = plan
  variables {
    execute_command = true
  }
  override_data {
    target = data.aws_partition.current
    values = { partition = "aws-cn", dns_suffix = "amazonaws.com.cn" }
  }

  # The mocked resources' own ARNs (roles, log groups, the stream, the topic and its key, the state
  # machine, the services) are the mock's, written for aws: left out; every ARN the module writes
  # itself must be aws-cn.
  assert {
    condition = (!strcontains(replace(join("\n", concat(
      [for p in aws_iam_role_policy.task : p.policy],
      [for r in aws_iam_role.task : r.assume_role_policy],
      [aws_iam_role_policy.deployment_watch.policy, aws_sns_topic_policy.alarms[0].policy, aws_kms_key.alarms[0].policy, aws_s3_bucket_policy.snapshots[0].policy],
      [output.operator_read_policy_json, output.operator_lifecycle_policy_json, aws_sfn_state_machine.deployment_watch.definition, aws_iam_role_policy_attachment.execution.policy_arn],
      )), "/arn:aws:(logs:eu-west-1:123456789012:log-group:|iam::123456789012:role/|kinesis:eu-west-1:123456789012:stream/|sns:eu-west-1:123456789012:snap-alarms|states:eu-west-1:123456789012:stateMachine:|kms:eu-west-1:123456789012:key/0b5e|ecs:eu-west-1:123456789012:service/)/", ""), "arn:aws:")
    && strcontains(aws_iam_role_policy.task["tm"].policy, "arn:aws-cn:ecs:eu-west-1:123456789012:task/snap/*"))
    error_message = "No ARN the module writes names the aws partition in aws-cn: they are built from data.aws_partition."
  }
  assert {
    condition     = aws_iam_role_policy_attachment.execution.policy_arn == "arn:aws-cn:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy" && strcontains(aws_sfn_state_machine.deployment_watch.definition, "arn:aws-cn:states:::sns:publish") && strcontains(aws_s3_bucket_policy.snapshots[0].policy, "arn:aws-cn:s3:::snap-bucket")
    error_message = "The managed policy, Step Functions' integrations and the bucket's ARNs follow the partition."
  }
}

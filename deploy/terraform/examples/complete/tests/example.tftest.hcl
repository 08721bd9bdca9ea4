# The example as Terraform plans it (mocked AWS provider): no path in from outside, the tasks'
# way out, the pinned agent image, and a replay beside version N.

mock_provider "aws" {
  source          = "../../modules/flink-ecs/tests"
  override_during = plan
  mock_data "aws_availability_zones" {
    defaults = { names = ["eu-west-1a", "eu-west-1b", "eu-west-1c"] }
  }
}

variables {
  region = "eu-west-1"
  image  = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/snapshots-job:1.0.0"
}

run "nothing_reaches_the_rest_api_from_an_address_range" {
  command = plan

  assert {
    condition     = length(aws_security_group.endpoints[0].ingress) == 0 && [for r in aws_vpc_security_group_ingress_rule.endpoints : "${r.cidr_ipv4} ${r.from_port}-${r.to_port}"] == ["10.42.0.0/16 443-443"]
    error_message = "The endpoints' group admits HTTPS from the VPC only, in a rule resource (the tasks' own group is the module's test)."
  }
  assert {
    condition     = length(local.network_ready) == 3 + length(local.endpoint_services)
    error_message = "The module's services start after the S3 gateway, the interface endpoints, their security group's rule and the pull-through cache (its network_ready): the first image pulls must find their way out."
  }
  assert {
    condition     = local.egress_https_cidr_blocks == ["10.42.0.0/16"] && length(local.egress_https_prefix_list_ids) == 1
    error_message = "Without a NAT gateway the tasks reach the interface endpoints in the VPC and S3 through its gateway, nothing else."
  }
  assert {
    condition     = jsondecode(local.pull_through_cache_policy["pull-through-cache"]).Statement[0].Resource == ["arn:aws:ecr:eu-west-1:123456789012:repository/snapshots-ecr-public/*"]
    error_message = "The execution role may fill the cache's repositories only; the module gets it, so its services wait for it."
  }
  assert {
    condition     = contains(keys(aws_vpc_endpoint.interface), "ssmmessages") && contains(keys(aws_vpc_endpoint.interface), "ecs")
    error_message = "ECS Exec and task protection reach AWS without a NAT."
  }
  assert {
    condition     = endswith(local.cloudwatch_agent_image, "/snapshots-ecr-public/cloudwatch-agent/cloudwatch-agent:1.300071.0b1720-amd64@sha256:f5680928b37cd5afacb5fd3de1b7ef7bfba57976f4f8b4227b49615467460cf2")
    error_message = "The agent comes through the pull-through cache, pinned by digest."
  }
  assert {
    condition     = length(module.replay) == 0
    error_message = "No replay unless asked for."
  }
}

run "a_replay_runs_beside_version_n_and_they_share_the_getrecords_budget" {
  command = plan
  variables {
    replay = { job_version = 2, from_savepoint = "s3://snap-bucket/flink/checkpoints/jm-1/abc/savepoints/savepoint-abc-1" }
  }

  assert {
    condition     = module.replay[0].stream_arn == module.snapshots.stream_arn && module.replay[0].bucket == module.snapshots.bucket && module.replay[0].cluster_name == module.snapshots.cluster_name
    error_message = "The replay reads version N's stream into its bucket, in its cluster."
  }
  assert {
    condition     = local.shard_poll_interval_ms == 400
    error_message = "Two consumers poll each shard every 400 ms: 2 x 2.5 calls per second, within Kinesis' 5."
  }
  assert {
    condition     = local.pull_through_cache_policy != {}
    error_message = "The replay's execution role pulls the agent through the cache too (the same policy, given to its module)."
  }
}

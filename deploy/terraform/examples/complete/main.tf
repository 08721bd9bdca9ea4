# The module in a VPC of its own, as a starting point: terraform init && terraform apply
# -var image=<your ECR image of deploy/docker/Dockerfile>.
#
# The tasks get no public IP, so they reach ECR (their images), S3 (checkpoints, snapshots),
# Kinesis, CloudWatch Logs (logs and the metrics sidecar's metrics), STS and the ECS API either
# through VPC endpoints (egress = "endpoints", the default: no internet path at all) or through a
# NAT gateway (egress = "nat": one in the first zone; simpler, and it reaches anything). The S3
# gateway endpoint is there in both modes: it costs nothing and keeps the bulk traffic off the NAT.

terraform {
  # The module's own floor: validations that name other variables need 1.9.
  required_version = ">= 1.9"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40, < 6.0"
    }
  }
}

provider "aws" {
  region = var.region
}

variable "region" {
  type    = string
  default = "us-east-1"
}

variable "image" {
  description = "The job's image in ECR."
  type        = string
}

variable "egress" {
  description = "How the tasks reach AWS: \"endpoints\" (VPC endpoints only) or \"nat\" (a NAT gateway)."
  type        = string
  default     = "endpoints"
  validation {
    condition     = contains(["endpoints", "nat"], var.egress)
    error_message = "egress must be \"endpoints\" or \"nat\"."
  }
}

variable "vpc_cidr" {
  type    = string
  default = "10.42.0.0/16"
}

variable "job_version" {
  description = "The job version the JobManager runs (README, runbook: bump it with from_savepoint)."
  type        = number
  default     = 1
}

variable "from_savepoint" {
  description = "Where a new job_version starts ('snapshots savepoint' prints it); empty: the stream's trim horizon."
  type        = string
  default     = ""
}

variable "replay" {
  description = "A replay beside the running version: job version N+1 from a savepoint, as a second cluster of services on the same stream, bucket and ECS cluster. null: none."
  type = object({
    job_version    = number
    from_savepoint = string
  })
  default = null
}

variable "zones" {
  description = "Availability zones to spread the tasks over."
  type        = number
  default     = 2
}

locals {
  name = "telemetry-snapshots"
  tags = { project = "snapshots" }
  nat  = var.egress == "nat"
  # Interface endpoints the tasks need without a NAT gateway: image pulls (ecr.api, ecr.dkr; the
  # layers come from S3), the stream, logs and the metrics sidecar (logs), CloudWatch's API for
  # anyone publishing metrics directly (monitoring), STS for SDKs that exchange credentials, and the
  # ECS API the scale-in protection goes through, the SSM message channels of ECS Exec, and Secrets
  # Manager, from which ECS reads the containers' secrets (a SQL script, REST TLS material).
  endpoint_services   = ["ecr.api", "ecr.dkr", "kinesis-streams", "logs", "monitoring", "sts", "ecs", "ssmmessages", "secretsmanager"]
  interface_endpoints = local.nat ? [] : local.endpoint_services
  # ECR Public is not reachable through VPC endpoints: without a NAT, the CloudWatch agent's image
  # comes through a pull-through cache in this account's ECR.
  agent_cache_prefix = "snapshots-ecr-public"
  # Pinned by digest (the module refuses less): a tag can move under a running deployment.
  cloudwatch_agent_version = "1.300071.0b1720-amd64@sha256:f5680928b37cd5afacb5fd3de1b7ef7bfba57976f4f8b4227b49615467460cf2"
  cloudwatch_agent_image = local.nat ? "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:${local.cloudwatch_agent_version}" : (
    "${data.aws_caller_identity.current.account_id}.dkr.ecr.${var.region}.amazonaws.com/${local.agent_cache_prefix}/cloudwatch-agent/cloudwatch-agent:${local.cloudwatch_agent_version}"
  )
  # Kinesis allows 5 GetRecords calls per second per shard, shared by every consumer: alone, the
  # job polls each shard every 200 ms; with a replay beside it both poll every 400 ms.
  shard_poll_interval_ms = var.replay == null ? 200 : 400
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

data "aws_availability_zones" "available" {
  state = "available"
}

resource "aws_vpc" "this" {
  cidr_block = var.vpc_cidr
  # Private DNS of the interface endpoints and the Cloud Map namespace need both.
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = merge(local.tags, { Name = local.name })
}

resource "aws_subnet" "private" {
  count             = var.zones
  vpc_id            = aws_vpc.this.id
  cidr_block        = cidrsubnet(var.vpc_cidr, 4, count.index)
  availability_zone = data.aws_availability_zones.available.names[count.index]
  tags              = merge(local.tags, { Name = "${local.name}-private-${count.index}" })
}

resource "aws_route_table" "private" {
  vpc_id = aws_vpc.this.id
  tags   = merge(local.tags, { Name = "${local.name}-private" })
}

resource "aws_route_table_association" "private" {
  count          = var.zones
  subnet_id      = aws_subnet.private[count.index].id
  route_table_id = aws_route_table.private.id
}

# --- egress = "nat" -------------------------------------------------------------------------

resource "aws_internet_gateway" "this" {
  count  = local.nat ? 1 : 0
  vpc_id = aws_vpc.this.id
  tags   = local.tags
}

resource "aws_subnet" "public" {
  count             = local.nat ? 1 : 0
  vpc_id            = aws_vpc.this.id
  cidr_block        = cidrsubnet(var.vpc_cidr, 4, 15)
  availability_zone = data.aws_availability_zones.available.names[0]
  tags              = merge(local.tags, { Name = "${local.name}-public" })
}

resource "aws_route_table" "public" {
  count  = local.nat ? 1 : 0
  vpc_id = aws_vpc.this.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.this[0].id
  }
  tags = merge(local.tags, { Name = "${local.name}-public" })
}

resource "aws_route_table_association" "public" {
  count          = local.nat ? 1 : 0
  subnet_id      = aws_subnet.public[0].id
  route_table_id = aws_route_table.public[0].id
}

resource "aws_eip" "nat" {
  count  = local.nat ? 1 : 0
  domain = "vpc"
  tags   = local.tags
}

resource "aws_nat_gateway" "this" {
  count         = local.nat ? 1 : 0
  allocation_id = aws_eip.nat[0].id
  subnet_id     = aws_subnet.public[0].id
  tags          = local.tags
  depends_on    = [aws_internet_gateway.this]
}

resource "aws_route" "private_to_nat" {
  count                  = local.nat ? 1 : 0
  route_table_id         = aws_route_table.private.id
  destination_cidr_block = "0.0.0.0/0"
  nat_gateway_id         = aws_nat_gateway.this[0].id
}

# --- egress = "endpoints" (the S3 gateway endpoint in both modes) --------------------------

resource "aws_vpc_endpoint" "s3" {
  vpc_id            = aws_vpc.this.id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  route_table_ids   = [aws_route_table.private.id]
  tags              = merge(local.tags, { Name = "${local.name}-s3" })
}

resource "aws_security_group" "endpoints" {
  count       = local.nat ? 0 : 1
  name        = "${local.name}-endpoints"
  description = "HTTPS from the tasks to the VPC interface endpoints."
  vpc_id      = aws_vpc.this.id
  tags        = local.tags
}

# From the VPC rather than from the tasks' security group: the module waits for the endpoints
# (network_ready below), so they cannot refer to it.
resource "aws_vpc_security_group_ingress_rule" "endpoints" {
  count             = local.nat ? 0 : 1
  security_group_id = aws_security_group.endpoints[0].id
  description       = "HTTPS from tasks in the VPC"
  cidr_ipv4         = var.vpc_cidr
  from_port         = 443
  to_port           = 443
  ip_protocol       = "tcp"
  tags              = local.tags
}

resource "aws_vpc_endpoint" "interface" {
  for_each            = toset(local.interface_endpoints)
  vpc_id              = aws_vpc.this.id
  service_name        = "com.amazonaws.${var.region}.${each.key}"
  vpc_endpoint_type   = "Interface"
  subnet_ids          = aws_subnet.private[*].id
  security_group_ids  = [aws_security_group.endpoints[0].id]
  private_dns_enabled = true
  tags                = merge(local.tags, { Name = "${local.name}-${each.key}" })
}

resource "aws_ecr_pull_through_cache_rule" "ecr_public" {
  count                 = local.nat ? 0 : 1
  ecr_repository_prefix = local.agent_cache_prefix
  upstream_registry_url = "public.ecr.aws"
}

# The first pull through the cache creates the repository and imports the image, as the pulling
# role: the execution role's, given to the module, whose services wait for it.
locals {
  pull_through_cache_policy = local.nat ? {} : {
    pull-through-cache = jsonencode({
      Version = "2012-10-17"
      Statement = [{
        Sid      = "PullThroughCache"
        Effect   = "Allow"
        Action   = ["ecr:BatchImportUpstreamImage", "ecr:CreateRepository"]
        Resource = ["arn:${data.aws_partition.current.partition}:ecr:${var.region}:${data.aws_caller_identity.current.account_id}:repository/${local.agent_cache_prefix}/*"]
      }]
    })
  }
  # HTTPS to the interface endpoints (in the VPC) and to S3 through its gateway (its prefix list),
  # or, with a NAT gateway, anywhere.
  egress_https_cidr_blocks     = local.nat ? ["0.0.0.0/0"] : [var.vpc_cidr]
  egress_https_prefix_list_ids = local.nat ? [] : [aws_vpc_endpoint.s3.prefix_list_id]
  # The first tasks must find their way out, or their failed starts trip the circuit breaker: the
  # module's services wait for these. Given as an input rather than the module's depends_on, which
  # would also hold back every data source in the module (its bucket check among them) to apply.
  network_ready = concat(
    [aws_vpc_endpoint.s3.id],
    [for e in aws_vpc_endpoint.interface : e.id],
    aws_vpc_security_group_ingress_rule.endpoints[*].id,
    aws_route.private_to_nat[*].id,
    aws_ecr_pull_through_cache_rule.ecr_public[*].id,
  )
}

# --- the job ------------------------------------------------------------------------------

module "snapshots" {
  source = "../../modules/flink-ecs"

  name                         = local.name
  vpc_id                       = aws_vpc.this.id
  subnet_ids                   = aws_subnet.private[*].id
  image                        = var.image
  cloudwatch_agent_image       = local.cloudwatch_agent_image
  job_version                  = var.job_version
  from_savepoint               = var.from_savepoint
  job_args                     = "--buckets 4"
  shard_poll_interval_ms       = local.shard_poll_interval_ms
  taskmanager_count            = 2
  spare_taskmanagers           = 1
  execution_role_policies      = local.pull_through_cache_policy
  egress_https_cidr_blocks     = local.egress_https_cidr_blocks
  egress_https_prefix_list_ids = local.egress_https_prefix_list_ids
  network_ready                = local.network_ready
  # Dead letters may go after a year; snapshots stay.
  expire_prefix     = "snapshots/_deadletter/"
  expire_after_days = 365
  tags              = local.tags

}

# A replay: job version N+1 recomputes from a savepoint beside version N, in services of its own
# (its own JobManager and TaskManagers, lag alarm and dashboard) on N's stream, bucket and cluster.
# Readers switch with 'snapshots promote' once it has caught up; then set job_version and
# from_savepoint of the main instance to the replay's, or remove the replay (README, runbook).
# Add it once the main instance exists: its outputs decide what the replay creates, and Terraform
# cannot count on values it learns only by creating them in the same apply.
module "replay" {
  source = "../../modules/flink-ecs"
  count  = var.replay == null ? 0 : 1

  name                         = "${local.name}-replay"
  vpc_id                       = aws_vpc.this.id
  subnet_ids                   = aws_subnet.private[*].id
  image                        = var.image
  cloudwatch_agent_image       = local.cloudwatch_agent_image
  existing_stream_arn          = module.snapshots.stream_arn
  existing_bucket              = module.snapshots.bucket
  existing_cluster_name        = module.snapshots.cluster_name
  job_version                  = var.replay.job_version
  from_savepoint               = var.replay.from_savepoint
  job_args                     = "--buckets 4"
  shard_poll_interval_ms       = local.shard_poll_interval_ms
  taskmanager_count            = 2
  spare_taskmanagers           = 0
  alarm_topic_arn              = module.snapshots.alarm_topic_arn
  execution_role_policies      = local.pull_through_cache_policy
  egress_https_cidr_blocks     = local.egress_https_cidr_blocks
  egress_https_prefix_list_ids = local.egress_https_prefix_list_ids
  network_ready                = local.network_ready
  tags                         = local.tags

}

output "store_uri" {
  value = module.snapshots.store_uri
}

output "snapshots_function" {
  description = "eval \"$(terraform output -raw snapshots_function)\" defines 'snapshots ARGS...', a one-off operator task."
  value       = module.snapshots.snapshots_function
}

output "exec_command" {
  value = module.snapshots.exec_command
}

output "jobmanager_rest" {
  value = module.snapshots.jobmanager_rest
}

output "alarm_topic_arn" {
  value = module.snapshots.alarm_topic_arn
}

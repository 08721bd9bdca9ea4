# The module in a VPC of its own, as a starting point: terraform init && terraform apply
# -var image=<your ECR image of deploy/docker/Dockerfile>.
#
# The tasks get no public IP, so they reach ECR (their images), S3 (checkpoints, snapshots),
# Kinesis, CloudWatch Logs (logs and the metrics sidecar's metrics), STS and the ECS API either
# through VPC endpoints (egress = "endpoints", the default: no internet path at all) or through a
# NAT gateway (egress = "nat": one in the first zone; simpler, and it reaches anything). The S3
# gateway endpoint is there in both modes: it costs nothing and keeps the bulk traffic off the NAT.

terraform {
  required_version = ">= 1.5"
  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.40"
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
  # ECS API the scale-in protection goes through.
  endpoint_services   = ["ecr.api", "ecr.dkr", "kinesis-streams", "logs", "monitoring", "sts", "ecs"]
  interface_endpoints = local.nat ? [] : local.endpoint_services
  # ECR Public is not reachable through VPC endpoints: without a NAT, the CloudWatch agent's image
  # comes through a pull-through cache in this account's ECR.
  agent_cache_prefix = "snapshots-ecr-public"
  cloudwatch_agent_image = local.nat ? "public.ecr.aws/cloudwatch-agent/cloudwatch-agent:latest" : (
    "${data.aws_caller_identity.current.account_id}.dkr.ecr.${var.region}.amazonaws.com/${local.agent_cache_prefix}/cloudwatch-agent/cloudwatch-agent:latest"
  )
}

data "aws_caller_identity" "current" {}

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
  # From the VPC rather than from the tasks' security group: the module waits for the endpoints
  # (depends_on below), so they cannot refer to it.
  ingress {
    description = "HTTPS from tasks in the VPC"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = [var.vpc_cidr]
  }
  tags = local.tags
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

# The first pull through the cache creates the repository and imports the image, as the pulling role.
data "aws_iam_policy_document" "pull_through_cache" {
  count = local.nat ? 0 : 1
  statement {
    sid       = "PullThroughCache"
    actions   = ["ecr:BatchImportUpstreamImage", "ecr:CreateRepository"]
    resources = ["arn:aws:ecr:${var.region}:${data.aws_caller_identity.current.account_id}:repository/${local.agent_cache_prefix}/*"]
  }
}

resource "aws_iam_role_policy" "pull_through_cache" {
  count  = local.nat ? 0 : 1
  name   = "pull-through-cache"
  role   = module.snapshots.execution_role_name
  policy = data.aws_iam_policy_document.pull_through_cache[0].json
}

# --- the job ------------------------------------------------------------------------------

module "snapshots" {
  source = "../../modules/flink-ecs"

  name                   = local.name
  vpc_id                 = aws_vpc.this.id
  subnet_ids             = aws_subnet.private[*].id
  image                  = var.image
  cloudwatch_agent_image = local.cloudwatch_agent_image
  job_args               = "--checkpoint-interval 10s --buckets 4"
  taskmanager_count      = 2
  spare_taskmanagers     = 1
  # Dead letters may go after a year; snapshots stay.
  expire_prefix     = "snapshots/_deadletter/"
  expire_after_days = 365
  tags              = local.tags

  # The first tasks must find their way out, or their failed starts trip the circuit breaker.
  depends_on = [aws_route.private_to_nat, aws_vpc_endpoint.s3, aws_vpc_endpoint.interface, aws_ecr_pull_through_cache_rule.ecr_public]
}

output "store_uri" {
  value = module.snapshots.store_uri
}

output "jobmanager_rest" {
  value = module.snapshots.jobmanager_rest
}

output "alarm_topic_arn" {
  value = module.snapshots.alarm_topic_arn
}

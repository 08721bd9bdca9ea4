# The module in a default VPC, as a starting point: terraform init && terraform apply
# -var image=<your ECR image of deploy/docker/Dockerfile>. Use private subnets in production.

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

data "aws_vpc" "default" {
  default = true
}

data "aws_subnets" "default" {
  filter {
    name   = "vpc-id"
    values = [data.aws_vpc.default.id]
  }
}

module "snapshots" {
  source = "../../modules/flink-ecs"

  name              = "telemetry-snapshots"
  vpc_id            = data.aws_vpc.default.id
  subnet_ids        = data.aws_subnets.default.ids
  image             = var.image
  job_args          = "--checkpoint-interval 10s --buckets 4"
  taskmanager_count = 2
  # Dead letters may go after a year; snapshots stay.
  expire_prefix     = "snapshots/_deadletter/"
  expire_after_days = 365
  tags              = { project = "snapshots" }
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

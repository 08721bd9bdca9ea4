terraform {
  # 1.9: validations that name other variables (checkpoint_alarm_minutes, shard_poll_interval_ms);
  # the module's tests (tests/*.tftest.hcl) use mock_provider, which needs 1.7.
  required_version = ">= 1.9"
  required_providers {
    aws = {
      source = "hashicorp/aws"
      # 5.40: aws_vpc_security_group_ingress_rule, and restartPolicy in container definitions. Below
      # 6.0, which the tests have not run against (TerraformITCase runs them with 5.100).
      version = ">= 5.40, < 6.0"
    }
  }
}

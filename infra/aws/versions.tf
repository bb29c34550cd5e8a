# The engine, the provider and the state backend. `podmin setup` passes the backend settings
# with -backend-config (bucket, key = tfstate/podmin.tfstate, region, use_lockfile = true), so
# the module names none of them.
terraform {
  required_version = ">= 1.11.0"

  required_providers {
    aws = {
      source = "hashicorp/aws"
      # Must equal AWS_PROVIDER_VERSION in tools/infra-stack/versions.env, which builds this
      # version for the offline test mirror.
      version = "= 6.47.0"
    }
  }

  backend "s3" {}
}

# Credentials and endpoints come from the standard AWS environment and profile chain; the
# module never carries them.
provider "aws" {
  region = var.region

  default_tags {
    tags = {
      "podmin:cluster" = var.cluster
    }
  }
}

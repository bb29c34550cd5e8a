# The VPC: created with an Amazon-provided IPv6 /56 when the CLI found none with this primary
# CIDR, otherwise the compatible one it matched, read here and never managed (so never
# destroyed) by this module.
resource "aws_vpc" "this" {
  count = var.existing_vpc_id == null ? 1 : 0

  cidr_block                       = var.vpc_cidr
  assign_generated_ipv6_cidr_block = true
  enable_dns_support               = true
  enable_dns_hostnames             = true

  tags = { Name = local.name_prefix }
}

data "aws_vpc" "existing" {
  count = var.existing_vpc_id == null ? 0 : 1
  id    = var.existing_vpc_id

  lifecycle {
    postcondition {
      condition     = self.cidr_block == var.vpc_cidr && self.ipv6_cidr_block != "" && self.enable_dns_support && self.enable_dns_hostnames
      error_message = "the reused VPC must have the primary CIDR ${var.vpc_cidr}, an Amazon-provided IPv6 /56, DNS support and DNS hostnames."
    }
  }
}

# IPv6 egress for the VMs (SSM, Secrets Manager and EC2 dual-stack endpoints); nothing can
# connect in through it.
resource "aws_egress_only_internet_gateway" "this" {
  vpc_id = local.vpc_id
  tags   = { Name = local.name_prefix }
}

# Workload subnets: one IPv6-native /64 per NodeGroup, in its zone. VMs have no IPv4 address.
resource "aws_subnet" "nodegroup" {
  for_each = var.nodegroups

  vpc_id                                         = local.vpc_id
  availability_zone                              = each.value.zone
  ipv6_native                                    = true
  ipv6_cidr_block                                = cidrsubnet(local.vpc_ipv6_cidr, 8, local.nodegroup_slot[each.key])
  assign_ipv6_address_on_creation                = true
  enable_dns64                                   = contains(keys(local.nodegroup_nat64), each.key)
  enable_resource_name_dns_aaaa_record_on_launch = true
  private_dns_hostname_type_on_launch            = "resource-name"

  tags = {
    Name               = "${local.name_prefix}-${each.key}"
    "podmin:nodegroup" = each.key
  }
}

resource "aws_route_table" "nodegroup" {
  for_each = var.nodegroups

  vpc_id = local.vpc_id
  tags = {
    Name               = "${local.name_prefix}-${each.key}"
    "podmin:nodegroup" = each.key
  }
}

resource "aws_route" "nodegroup_ipv6_default" {
  for_each = var.nodegroups

  route_table_id              = aws_route_table.nodegroup[each.key].id
  destination_ipv6_cidr_block = "::/0"
  egress_only_gateway_id      = aws_egress_only_internet_gateway.this.id
}

resource "aws_route_table_association" "nodegroup" {
  for_each = var.nodegroups

  subnet_id      = aws_subnet.nodegroup[each.key].id
  route_table_id = aws_route_table.nodegroup[each.key].id
}

# S3 through a gateway endpoint (dual-stack, so the IPv6-only VMs reach S3's dual-stack
# hostname), restricted to the cluster bucket, the regional SSM Agent package path and the
# --workload-ca-publish object when there is one.
resource "aws_vpc_endpoint" "s3" {
  vpc_id            = local.vpc_id
  service_name      = "com.amazonaws.${var.region}.s3"
  vpc_endpoint_type = "Gateway"
  ip_address_type   = "dualstack"
  route_table_ids = concat(
    [for rt in aws_route_table.nodegroup : rt.id],
    [for rt in aws_route_table.nat64_management : rt.id],
    [for rt in aws_route_table.nat64_data : rt.id],
  )
  policy = data.aws_iam_policy_document.s3_endpoint.json

  tags = { Name = local.name_prefix }
}

data "aws_iam_policy_document" "s3_endpoint" {
  statement {
    sid       = "ClusterBucket"
    actions   = ["s3:GetObject", "s3:PutObject", "s3:ListBucket"]
    resources = ["arn:${local.partition}:s3:::${var.bucket}", "arn:${local.partition}:s3:::${var.bucket}/*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
  }

  dynamic "statement" {
    # Only a destination bucket in this region is reached through the endpoint at all.
    for_each = var.workload_ca_publish == null ? [] : [local.workload_ca_publish_arn]
    content {
      sid       = "WorkloadCaBundle"
      actions   = ["s3:GetObject", "s3:PutObject"]
      resources = [statement.value]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
    }
  }

  dynamic "statement" {
    # The exporter's CA bundle object, when it is in this region.
    for_each = local.otel_logs_ca_arn == null ? [] : [local.otel_logs_ca_arn]
    content {
      sid       = "OtelLogsCaBundle"
      actions   = ["s3:GetObject"]
      resources = [statement.value]
      principals {
        type        = "*"
        identifiers = ["*"]
      }
    }
  }

  statement {
    sid       = "SsmAgentPackage"
    actions   = ["s3:GetObject"]
    resources = ["arn:${local.partition}:s3:::${local.ssm_deb_bucket}/latest/debian_*"]
    principals {
      type        = "*"
      identifiers = ["*"]
    }
  }
}

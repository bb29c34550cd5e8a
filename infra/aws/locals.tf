locals {
  vpc_id         = var.existing_vpc_id == null ? aws_vpc.this[0].id : data.aws_vpc.existing[0].id
  vpc_ipv6_cidr  = var.existing_vpc_id == null ? aws_vpc.this[0].ipv6_cidr_block : data.aws_vpc.existing[0].ipv6_cidr_block
  vpc_ipv4_cidr  = var.existing_vpc_id == null ? aws_vpc.this[0].cidr_block : data.aws_vpc.existing[0].cidr_block
  vpc_ipv4_bits  = tonumber(split("/", var.vpc_cidr)[1])
  zone_letters   = split("", "abcdefgh")
  zone_index     = { for zone in distinct([for ng in values(var.nodegroups) : ng.zone]) : zone => index(local.zone_letters, substr(zone, length(zone) - 1, 1)) }
  partition      = data.aws_partition.current.partition
  account_id     = data.aws_caller_identity.current.account_id
  name_prefix    = "podmin-${var.cluster}"
  ssm_deb_bucket = "amazon-ssm-${var.region}"

  # IPv6 /64 slots in the VPC's /56: NodeGroups take slot sha256(name) mod 240, stable under
  # adding and removing other NodeGroups; 240 + zone letter holds a zone's NAT64 management
  # subnet and 248 + zone letter its NAT64 data subnet. The CLI's reuse check must find these
  # slots free in a reused VPC.
  nodegroup_slot = { for name in keys(var.nodegroups) : name => parseint(substr(sha256(name), 0, 4), 16) % 240 }

  # NAT64 instances. Shared: one per zone holding a NodeGroup without its own nat64, when the
  # top-level nat64 is set. Dedicated: one per NodeGroup with nat64 set.
  shared_nat64_zones = var.nat64 == null ? [] : distinct([for ng in values(var.nodegroups) : ng.zone if ng.nat64 == null])
  nat64_instances = merge(
    { for zone in local.shared_nat64_zones : "shared-${zone}" => {
      zone          = zone
      instance_type = var.nat64.instance_type
      arch          = var.nat64.arch
      nodegroups    = sort([for name, ng in var.nodegroups : name if ng.nat64 == null && ng.zone == zone])
    } },
    { for name, ng in var.nodegroups : "nodegroup-${name}" => {
      zone          = ng.zone
      instance_type = ng.nat64.instance_type
      arch          = ng.nat64.arch
      nodegroups    = [name]
    } if ng.nat64 != null },
  )
  nat64_zones = distinct([for instance in values(local.nat64_instances) : instance.zone])

  # The NAT64 instance serving each NodeGroup, if any: DNS64 and the 64:ff9b::/96 route are
  # set only where a translator exists, so no NodeGroup resolves names it cannot reach.
  nodegroup_nat64 = merge([for key, instance in local.nat64_instances : { for name in instance.nodegroups : name => key }]...)

  common_tags = { "podmin:cluster" = var.cluster }
}

data "aws_partition" "current" {}

data "aws_caller_identity" "current" {}

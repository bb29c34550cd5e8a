# NAT64: stateful Jool (Netfilter mode) on Debian, one size-one Auto Scaling Group per
# translator. Each instance boots with a disposable IPv6-only management ENI (launch template)
# and then claims the translator's stable data ENI, which carries a private IPv4, an IPv6
# address and an Elastic IP and is the target of its NodeGroups' 64:ff9b::/96 route.
#
# IPv4 is kept to the minimum NAT64 needs: per zone with a translator, one /28 data subnet cut
# from the top of the VPC CIDR (vpc_cidr is /16 to /24, so eight zone letters always fit) whose
# route table sends 0.0.0.0/0 to one internet gateway. Nothing else in the VPC has IPv4.
locals {
  # Non-global IPv4 ranges (RFC 6890 and the instance metadata service) that the translators
  # refuse to reach, as their 64:ff9b::/96 (RFC 6052) IPv6 forms.
  non_global_ipv4 = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15",
    "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
  ]
  nat64_rejected_prefixes = [for cidr in local.non_global_ipv4 : format(
    "64:ff9b::%x:%x/%d",
    tonumber(split(".", split("/", cidr)[0])[0]) * 256 + tonumber(split(".", split("/", cidr)[0])[1]),
    tonumber(split(".", split("/", cidr)[0])[2]) * 256 + tonumber(split(".", split("/", cidr)[0])[3]),
    96 + tonumber(split("/", cidr)[1]),
  )]
  nat64_hook_name = "podmin-nat64-handoff"
}

resource "aws_internet_gateway" "nat64" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  vpc_id = local.vpc_id
  tags   = { Name = "${local.name_prefix}-nat64" }
}

resource "aws_subnet" "nat64_management" {
  for_each = toset(local.nat64_zones)

  vpc_id                                         = local.vpc_id
  availability_zone                              = each.key
  ipv6_native                                    = true
  ipv6_cidr_block                                = cidrsubnet(local.vpc_ipv6_cidr, 8, 240 + local.zone_index[each.key])
  assign_ipv6_address_on_creation                = true
  enable_resource_name_dns_aaaa_record_on_launch = true
  private_dns_hostname_type_on_launch            = "resource-name"

  tags = { Name = "${local.name_prefix}-nat64-management-${each.key}" }
}

resource "aws_subnet" "nat64_data" {
  for_each = toset(local.nat64_zones)

  vpc_id            = local.vpc_id
  availability_zone = each.key
  cidr_block        = cidrsubnet(var.vpc_cidr, 28 - local.vpc_ipv4_bits, pow(2, 28 - local.vpc_ipv4_bits) - 1 - local.zone_index[each.key])
  ipv6_cidr_block   = cidrsubnet(local.vpc_ipv6_cidr, 8, 248 + local.zone_index[each.key])

  tags = { Name = "${local.name_prefix}-nat64-data-${each.key}" }
}

resource "aws_route_table" "nat64_management" {
  for_each = toset(local.nat64_zones)

  vpc_id = local.vpc_id
  tags   = { Name = "${local.name_prefix}-nat64-management-${each.key}" }
}

resource "aws_route" "nat64_management_ipv6_default" {
  for_each = toset(local.nat64_zones)

  route_table_id              = aws_route_table.nat64_management[each.key].id
  destination_ipv6_cidr_block = "::/0"
  egress_only_gateway_id      = aws_egress_only_internet_gateway.this.id
}

resource "aws_route_table_association" "nat64_management" {
  for_each = toset(local.nat64_zones)

  subnet_id      = aws_subnet.nat64_management[each.key].id
  route_table_id = aws_route_table.nat64_management[each.key].id
}

resource "aws_route_table" "nat64_data" {
  for_each = toset(local.nat64_zones)

  vpc_id = local.vpc_id
  tags   = { Name = "${local.name_prefix}-nat64-data-${each.key}" }
}

resource "aws_route" "nat64_data_ipv4_default" {
  for_each = toset(local.nat64_zones)

  route_table_id         = aws_route_table.nat64_data[each.key].id
  destination_cidr_block = "0.0.0.0/0"
  gateway_id             = aws_internet_gateway.nat64[0].id
}

resource "aws_route" "nat64_data_ipv6_default" {
  for_each = toset(local.nat64_zones)

  route_table_id              = aws_route_table.nat64_data[each.key].id
  destination_ipv6_cidr_block = "::/0"
  egress_only_gateway_id      = aws_egress_only_internet_gateway.this.id
}

resource "aws_route_table_association" "nat64_data" {
  for_each = toset(local.nat64_zones)

  subnet_id      = aws_subnet.nat64_data[each.key].id
  route_table_id = aws_route_table.nat64_data[each.key].id
}

# The stable data ENI: outlives instances, forwards (no source/destination check).
resource "aws_network_interface" "nat64_data" {
  for_each = local.nat64_instances

  subnet_id          = aws_subnet.nat64_data[each.value.zone].id
  security_groups    = [aws_security_group.nat64_data[each.key].id]
  ipv6_address_count = 1
  source_dest_check  = false
  description        = "podmin ${var.cluster} NAT64 ${each.key} stable data ENI"

  tags = merge(
    { Name = "${local.name_prefix}-nat64-${each.key}", "podmin:nat64" = each.key },
    length(each.value.nodegroups) == 1 && startswith(each.key, "nodegroup-") ? { "podmin:nodegroup" = each.value.nodegroups[0] } : {},
  )

  lifecycle {
    # The handoff stamps the winning launch generation on the ENI; it is not configuration.
    ignore_changes = [tags["podmin:nat64-generation"], attachment]
  }
}

resource "aws_eip" "nat64" {
  for_each = local.nat64_instances

  domain                    = "vpc"
  network_interface         = aws_network_interface.nat64_data[each.key].id
  associate_with_private_ip = aws_network_interface.nat64_data[each.key].private_ip
  tags                      = { Name = "${local.name_prefix}-nat64-${each.key}" }

  depends_on = [aws_internet_gateway.nat64]
}

resource "aws_route" "nodegroup_nat64" {
  for_each = local.nodegroup_nat64

  route_table_id              = aws_route_table.nodegroup[each.key].id
  destination_ipv6_cidr_block = "64:ff9b::/96"
  network_interface_id        = aws_network_interface.nat64_data[each.value].id
}

resource "aws_launch_template" "nat64" {
  for_each = local.nat64_instances

  name                   = "${local.name_prefix}-nat64-${each.key}"
  image_id               = var.amis[each.value.arch]
  instance_type          = each.value.instance_type
  update_default_version = true
  # Changes with nat64_generation on every setup: a new version, hence an instance refresh.
  user_data = base64gzip(templatefile("${path.module}/nat64.sh.tftpl", {
    cluster           = var.cluster
    region            = var.region
    bucket            = var.bucket
    arch              = each.value.arch
    generation        = var.nat64_generation
    translator        = each.key
    data_eni_id       = aws_network_interface.nat64_data[each.key].id
    data_ipv4         = aws_network_interface.nat64_data[each.key].private_ip
    data_ipv4_cidr    = aws_subnet.nat64_data[each.value.zone].cidr_block
    asg_name          = "${local.name_prefix}-nat64-${each.key}"
    hook_name         = local.nat64_hook_name
    workload_subnets  = [for name in each.value.nodegroups : aws_subnet.nodegroup[name].ipv6_cidr_block]
    rejected_prefixes = local.nat64_rejected_prefixes
  }))

  iam_instance_profile {
    arn = aws_iam_instance_profile.nat64[0].arn
  }

  network_interfaces {
    device_index          = 0
    subnet_id             = aws_subnet.nat64_management[each.value.zone].id
    security_groups       = [aws_security_group.nat64_management[0].id]
    ipv6_address_count    = 1
    primary_ipv6          = true
    delete_on_termination = true
  }

  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_type           = "gp3"
      encrypted             = true
      delete_on_termination = true
    }
  }

  metadata_options {
    http_endpoint               = "enabled"
    http_protocol_ipv6          = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  dynamic "tag_specifications" {
    for_each = ["instance", "network-interface", "volume"]
    content {
      resource_type = tag_specifications.value
      tags = merge(
        local.common_tags,
        { Name = "${local.name_prefix}-nat64-${each.key}", "podmin:nat64" = each.key, "podmin:nat64-generation" = var.nat64_generation },
        startswith(each.key, "nodegroup-") ? { "podmin:nodegroup" = each.value.nodegroups[0] } : {},
      )
    }
  }

  tags = { "podmin:nat64" = each.key }
}

resource "aws_autoscaling_group" "nat64" {
  for_each = local.nat64_instances

  name                      = "${local.name_prefix}-nat64-${each.key}"
  min_size                  = 1
  max_size                  = 1
  desired_capacity          = 1
  vpc_zone_identifier       = [aws_subnet.nat64_management[each.value.zone].id]
  health_check_type         = "EC2"
  wait_for_capacity_timeout = "20m"

  launch_template {
    id      = aws_launch_template.nat64[each.key].id
    version = aws_launch_template.nat64[each.key].latest_version
  }

  # Launch before terminate: the replacement comes up beside the old translator and takes the
  # data ENI over only after it validated itself, then completes this hook.
  instance_refresh {
    strategy = "Rolling"
    preferences {
      min_healthy_percentage = 100
      max_healthy_percentage = 200
    }
  }

  initial_lifecycle_hook {
    name                 = local.nat64_hook_name
    lifecycle_transition = "autoscaling:EC2_INSTANCE_LAUNCHING"
    default_result       = "ABANDON"
    heartbeat_timeout    = 1200
  }

  tag {
    key                 = "podmin:cluster"
    value               = var.cluster
    propagate_at_launch = false
  }

  tag {
    key                 = "podmin:nat64"
    value               = each.key
    propagate_at_launch = false
  }

  depends_on = [aws_route_table_association.nat64_management, aws_route_table_association.nat64_data, aws_eip.nat64, aws_vpc_endpoint.s3]
}

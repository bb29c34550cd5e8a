# Nodes accept only workload traffic from the NodeGroup subnets (which includes the agents'
# coordination port) and nothing from outside the VPC; there is no SSH rule: administration
# goes through SSM. Replies to outbound traffic are allowed by the groups' statefulness.
resource "aws_security_group" "node" {
  name        = "${local.name_prefix}-node"
  description = "podmin ${var.cluster} nodes: workload traffic between NodeGroup subnets, agent leader traffic"
  vpc_id      = local.vpc_id
  tags        = { Name = "${local.name_prefix}-node" }
}

resource "aws_vpc_security_group_ingress_rule" "node_workload" {
  for_each = aws_subnet.nodegroup

  security_group_id = aws_security_group.node.id
  description       = "workload traffic from NodeGroup ${each.key}"
  ip_protocol       = "-1"
  cidr_ipv6         = each.value.ipv6_cidr_block
}

resource "aws_vpc_security_group_ingress_rule" "node_leader" {
  security_group_id            = aws_security_group.node.id
  description                  = "agent leader coordination (gRPC over mTLS) between nodes"
  ip_protocol                  = "tcp"
  from_port                    = 8081
  to_port                      = 8081
  referenced_security_group_id = aws_security_group.node.id
}

resource "aws_vpc_security_group_egress_rule" "node_ipv6" {
  security_group_id = aws_security_group.node.id
  description       = "IPv6 egress: VPC, AWS service endpoints, NAT64 through 64:ff9b::/96"
  ip_protocol       = "-1"
  cidr_ipv6         = "::/0"
}

# NAT64 data ENIs: only the workload subnets the instance serves may send traffic in; the
# translated IPv4 side leaves through the internet gateway.
resource "aws_security_group" "nat64_data" {
  for_each = local.nat64_instances

  name        = "${local.name_prefix}-nat64-${each.key}"
  description = "podmin ${var.cluster} NAT64 ${each.key}: translation for its NodeGroup subnets only"
  vpc_id      = local.vpc_id
  tags        = { Name = "${local.name_prefix}-nat64-${each.key}" }
}

resource "aws_vpc_security_group_ingress_rule" "nat64_data" {
  for_each = merge([for key, instance in local.nat64_instances : {
    for name in instance.nodegroups : "${key}/${name}" => { instance = key, nodegroup = name }
  }]...)

  security_group_id = aws_security_group.nat64_data[each.value.instance].id
  description       = "traffic to translate from NodeGroup ${each.value.nodegroup}"
  ip_protocol       = "-1"
  cidr_ipv6         = aws_subnet.nodegroup[each.value.nodegroup].ipv6_cidr_block
}

resource "aws_vpc_security_group_egress_rule" "nat64_data_ipv4" {
  for_each = local.nat64_instances

  security_group_id = aws_security_group.nat64_data[each.key].id
  description       = "translated IPv4 traffic (non-global destinations are rejected on the instance)"
  ip_protocol       = "-1"
  cidr_ipv4         = "0.0.0.0/0"
}

# NAT64 management ENIs (disposable, IPv6-only): no inbound rule at all.
resource "aws_security_group" "nat64_management" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  name        = "${local.name_prefix}-nat64-management"
  description = "podmin ${var.cluster} NAT64 management: egress only (SSM, S3, EC2 APIs)"
  vpc_id      = local.vpc_id
  tags        = { Name = "${local.name_prefix}-nat64-management" }
}

resource "aws_vpc_security_group_egress_rule" "nat64_management_ipv6" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  security_group_id = aws_security_group.nat64_management[0].id
  description       = "IPv6 egress to AWS service endpoints"
  ip_protocol       = "-1"
  cidr_ipv6         = "::/0"
}

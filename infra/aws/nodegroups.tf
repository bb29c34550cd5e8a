# One launch template and Auto Scaling Group per NodeGroup. Each VM gets a primary ENI with
# the node IPv6 address and a secondary ENI with one ordinary IPv6 address, to which bootstrap
# then assigns the delegated /80 Pod prefix (AWS allocates addresses before prefixes).
resource "aws_launch_template" "nodegroup" {
  for_each = var.nodegroups

  name                   = "${local.name_prefix}-${each.key}"
  image_id               = var.amis[each.value.arch]
  instance_type          = each.value.instance_type
  update_default_version = true
  # The CLI renders plain text; EC2 gets deterministic gzip bytes, base64-encoded once.
  user_data = base64gzip(each.value.user_data)

  iam_instance_profile {
    arn = aws_iam_instance_profile.node.arn
  }

  network_interfaces {
    device_index                = 0
    subnet_id                   = aws_subnet.nodegroup[each.key].id
    security_groups             = [aws_security_group.node.id]
    ipv6_address_count          = 1
    primary_ipv6                = true
    associate_public_ip_address = false
    delete_on_termination       = true
  }

  network_interfaces {
    device_index          = 1
    subnet_id             = aws_subnet.nodegroup[each.key].id
    security_groups       = [aws_security_group.node.id]
    ipv6_address_count    = 1
    delete_on_termination = true
  }

  # Debian's cloud images boot from /dev/xvda. Encryption uses the account's default EBS key.
  block_device_mappings {
    device_name = "/dev/xvda"
    ebs {
      volume_size           = each.value.disk_size
      volume_type           = "gp3"
      encrypted             = true
      delete_on_termination = true
    }
  }

  # Bootstrap reads IMDSv2 over IPv6 ([fd00:ec2::254]); one hop keeps Pods away from it.
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
      tags = merge(local.common_tags, {
        Name               = "${local.name_prefix}-${each.key}"
        "podmin:nodegroup" = each.key
      })
    }
  }

  tags = { "podmin:nodegroup" = each.key }
}

resource "aws_autoscaling_group" "nodegroup" {
  for_each = var.nodegroups

  name                = "${local.name_prefix}-${each.key}"
  min_size            = each.value.size
  max_size            = each.value.size
  desired_capacity    = each.value.size
  vpc_zone_identifier = [aws_subnet.nodegroup[each.key].id]
  health_check_type   = "EC2"

  launch_template {
    id      = aws_launch_template.nodegroup[each.key].id
    version = aws_launch_template.nodegroup[each.key].latest_version
  }

  tag {
    key                 = "podmin:cluster"
    value               = var.cluster
    propagate_at_launch = false
  }

  tag {
    key                 = "podmin:nodegroup"
    value               = each.key
    propagate_at_launch = false
  }

  # A NodeGroup's route to its NAT64 translator exists before its first VM boots.
  depends_on = [aws_route.nodegroup_nat64, aws_route_table_association.nodegroup, aws_vpc_endpoint.s3]
}

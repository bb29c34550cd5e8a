# Instance roles. Nodes read the cluster's objects, write only the agents' coordination
# objects, read their cluster's parameters and secrets, and manage the Pod prefix on their own
# ENIs; NAT64 instances read their Jool archive and move their stable data ENI. Both get
# AmazonSSMManagedInstanceCore for Session Manager and Run Command, which grants no Parameter
# Store reads beyond the cluster's.
data "aws_iam_policy_document" "ec2_assume" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

locals {
  bucket_arn = "arn:${local.partition}:s3:::${var.bucket}"
  # Everything the agents read; tfstate/ is not among them.
  node_read_prefixes = ["apps", "mirror", "dependencies", "deployments", "nodegroups", "services", "dns", "identity"]
}

resource "aws_iam_role" "node" {
  name               = "${local.name_prefix}-node"
  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json
}

data "aws_iam_policy_document" "node" {
  statement {
    sid       = "ReadClusterObjects"
    actions   = ["s3:GetObject"]
    resources = [for prefix in local.node_read_prefixes : "${local.bucket_arn}/${prefix}/*"]
  }

  statement {
    sid       = "ListClusterObjects"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = [for prefix in local.node_read_prefixes : "${prefix}/*"]
    }
  }

  statement {
    # Leader election, the Service snapshot and the leader-only workload CA rotation.
    sid     = "WriteCoordinationObjects"
    actions = ["s3:PutObject"]
    resources = [
      "${local.bucket_arn}/dns/leader.json",
      "${local.bucket_arn}/dns/services.pb",
      "${local.bucket_arn}/identity/ca.json",
    ]
  }

  statement {
    sid       = "ReadClusterParameters"
    actions   = ["ssm:GetParameter", "ssm:GetParameters", "ssm:GetParametersByPath"]
    resources = ["arn:${local.partition}:ssm:${var.region}:${local.account_id}:parameter/${var.cluster}/*"]
  }

  statement {
    sid       = "ReadClusterSecrets"
    actions   = ["secretsmanager:GetSecretValue", "secretsmanager:DescribeSecret"]
    resources = ["arn:${local.partition}:secretsmanager:${var.region}:${local.account_id}:secret:/${var.cluster}/*"]
  }

  statement {
    # Bootstrap assigns the one delegated /80 Pod prefix to the node's own secondary ENI.
    sid       = "AssignPodPrefix"
    actions   = ["ec2:AssignIpv6Addresses"]
    resources = ["arn:${local.partition}:ec2:${var.region}:${local.account_id}:network-interface/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/podmin:cluster"
      values   = [var.cluster]
    }
  }

  statement {
    # Describe calls support no resource-level restriction.
    sid       = "DescribeNetworkInterfaces"
    actions   = ["ec2:DescribeNetworkInterfaces"]
    resources = ["*"]
  }
}

resource "aws_iam_role_policy" "node" {
  name   = "podmin-node"
  role   = aws_iam_role.node.id
  policy = data.aws_iam_policy_document.node.json
}

resource "aws_iam_role_policy_attachment" "node_ssm" {
  role       = aws_iam_role.node.name
  policy_arn = "arn:${local.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

resource "aws_iam_instance_profile" "node" {
  name = "${local.name_prefix}-node"
  role = aws_iam_role.node.name
}

resource "aws_iam_role" "nat64" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  name               = "${local.name_prefix}-nat64"
  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json
}

data "aws_iam_policy_document" "nat64" {
  statement {
    sid       = "ReadDependencies"
    actions   = ["s3:GetObject"]
    resources = ["${local.bucket_arn}/dependencies/*"]
  }

  statement {
    # The stable data ENIs carry podmin:cluster; the handoff detaches one from the previous
    # instance, attaches it here and stamps the winning generation on it.
    sid     = "HandOffDataEni"
    actions = ["ec2:AttachNetworkInterface", "ec2:DetachNetworkInterface", "ec2:CreateTags"]
    resources = [
      "arn:${local.partition}:ec2:${var.region}:${local.account_id}:network-interface/*",
      "arn:${local.partition}:ec2:${var.region}:${local.account_id}:instance/*",
    ]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/podmin:cluster"
      values   = [var.cluster]
    }
  }

  statement {
    sid       = "DescribeForHandOff"
    actions   = ["ec2:DescribeNetworkInterfaces", "ec2:DescribeInstances"]
    resources = ["*"]
  }

  statement {
    sid       = "CompleteLaunch"
    actions   = ["autoscaling:CompleteLifecycleAction"]
    resources = ["arn:${local.partition}:autoscaling:${var.region}:${local.account_id}:autoScalingGroup:*:autoScalingGroupName/${local.name_prefix}-nat64-*"]
  }
}

resource "aws_iam_role_policy" "nat64" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  name   = "podmin-nat64"
  role   = aws_iam_role.nat64[0].id
  policy = data.aws_iam_policy_document.nat64.json
}

resource "aws_iam_role_policy_attachment" "nat64_ssm" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  role       = aws_iam_role.nat64[0].name
  policy_arn = "arn:${local.partition}:iam::aws:policy/AmazonSSMManagedInstanceCore"
}

resource "aws_iam_instance_profile" "nat64" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  name = "${local.name_prefix}-nat64"
  role = aws_iam_role.nat64[0].name
}

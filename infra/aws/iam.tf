# Instance roles, inline policies only. Nodes read exactly the cluster objects the agents and
# bootstrap read, write only the agents' coordination objects and their receipts, read their
# cluster's parameters and secrets, manage the Pod prefix on their NodeGroup ENIs and run SSM
# Agent for Session Manager and Run Command; NAT64 instances read their Jool archive, move their
# stable data ENI and run SSM Agent. No AWS-managed policy is attached:
# AmazonSSMManagedInstanceCore's ssm:GetParameter* on * would widen Parameter Store reads past
# /<cluster>/. infra/aws/README.md lists every statement and why; test/expected-policies.mjs is
# what the checks hold them to.
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
  # Every object key (IAM pattern) a node reads: the deployment index and the payloads it names,
  # the registry's apps/ and mirror/ layouts, the dependency set bootstrap syncs, and the
  # coordination objects. tfstate/ and status/ are not among them.
  node_read_keys = [
    "apps/*",
    "mirror/*",
    "dependencies/*",
    "deployments/index.json",
    "nodegroups/*/pods/sha512/*",
    "services/*/*/sha512/*",
    "dns/leader.json",
    "dns/services.pb",
    "dns/rollouts.json",
    "identity/ca.json",
  ]
  # What the agents write: the leader record, the Service snapshot, the rollout state (admissions
  # and halts) and the workload CA state.
  node_write_keys = ["dns/leader.json", "dns/services.pb", "dns/rollouts.json", "identity/ca.json"]
  # A node's receipt is status/<nodegroup>/<node-id>.json, the node ID being the instance ID.
  # No IAM policy variable is the bare instance ID (aws:userid is <role-id>:i-…), so this admits
  # any instance-ID-named receipt, not only the caller's own.
  node_receipt_key = "status/*/i-*.json"
  workload_ca_publish_arn = (
    var.workload_ca_publish == null ? null :
    "arn:${local.partition}:s3:::${var.workload_ca_publish.bucket}/${var.workload_ca_publish.key}"
  )
  # setup --otel-logs ca=s3://B/K: the exporter's private server CA bundle, read by the agent.
  otel_logs_ca_arn = (
    var.otel_logs == null ? null : (
      var.otel_logs.ca_key == null ? null :
      "arn:${local.partition}:s3:::${var.otel_logs.ca_bucket}/${var.otel_logs.ca_key}"
    )
  )
  # SSM Agent's own calls, as AWS documents them: Session Manager's minimal instance policy
  # (UpdateInstanceInformation and the four ssmmessages channel actions) and the ec2messages
  # actions of Run Command's message delivery. None supports resource-level permissions.
  ssm_agent_session_actions = [
    "ssm:UpdateInstanceInformation",
    "ssmmessages:CreateControlChannel",
    "ssmmessages:CreateDataChannel",
    "ssmmessages:OpenControlChannel",
    "ssmmessages:OpenDataChannel",
  ]
  ssm_agent_command_actions = [
    "ec2messages:AcknowledgeMessage",
    "ec2messages:DeleteMessage",
    "ec2messages:FailMessage",
    "ec2messages:GetEndpoint",
    "ec2messages:GetMessages",
    "ec2messages:SendReply",
  ]
}

resource "aws_iam_role" "node" {
  name               = "${local.name_prefix}-node"
  assume_role_policy = data.aws_iam_policy_document.ec2_assume.json
}

data "aws_iam_policy_document" "node" {
  statement {
    sid       = "ReadClusterObjects"
    actions   = ["s3:GetObject"]
    resources = [for key in local.node_read_keys : "${local.bucket_arn}/${key}"]
  }

  statement {
    # Bootstrap's aws s3 sync lists dependencies/; with ListBucket S3 also answers a missing
    # object (no leader record or CA state yet) with 404 rather than 403.
    sid       = "ListClusterObjects"
    actions   = ["s3:ListBucket"]
    resources = [local.bucket_arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = local.node_read_keys
    }
  }

  statement {
    # Leader election, the Service snapshot and the leader-only workload CA rotation.
    sid       = "WriteCoordinationObjects"
    actions   = ["s3:PutObject"]
    resources = [for key in local.node_write_keys : "${local.bucket_arn}/${key}"]
  }

  statement {
    sid       = "WriteReceipts"
    actions   = ["s3:PutObject"]
    resources = ["${local.bucket_arn}/${local.node_receipt_key}"]
  }

  dynamic "statement" {
    # setup --workload-ca-publish: the one external object the leader keeps the bundle at.
    for_each = var.workload_ca_publish == null ? [] : [local.workload_ca_publish_arn]
    content {
      sid       = "PublishWorkloadCaBundle"
      actions   = ["s3:GetObject", "s3:PutObject"]
      resources = [statement.value]
    }
  }

  dynamic "statement" {
    # setup --otel-logs ca=: the one external object the agent reads the exporter's CA from.
    for_each = local.otel_logs_ca_arn == null ? [] : [local.otel_logs_ca_arn]
    content {
      sid       = "ReadOtelLogsCaBundle"
      actions   = ["s3:GetObject"]
      resources = [statement.value]
    }
  }

  statement {
    # The agents read one value at a time (GetParameter, decrypted with the AWS-managed key).
    sid       = "ReadClusterParameters"
    actions   = ["ssm:GetParameter"]
    resources = ["arn:${local.partition}:ssm:${var.region}:${local.account_id}:parameter/${var.cluster}/*"]
  }

  statement {
    sid       = "ReadClusterSecrets"
    actions   = ["secretsmanager:GetSecretValue"]
    resources = ["arn:${local.partition}:secretsmanager:${var.region}:${local.account_id}:secret:/${var.cluster}/*"]
  }

  statement {
    # Bootstrap assigns the secondary ENI its address and one delegated /80 Pod prefix. EC2 has
    # no condition tying an ENI to the calling instance; the tags narrow it to this cluster's
    # NodeGroup ENIs (launch-template tagged), never a NAT64 data ENI (tagged podmin:nat64).
    sid       = "AssignPodPrefix"
    actions   = ["ec2:AssignIpv6Addresses"]
    resources = ["arn:${local.partition}:ec2:${var.region}:${local.account_id}:network-interface/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/podmin:cluster"
      values   = [var.cluster]
    }
    condition {
      test     = "Null"
      variable = "aws:ResourceTag/podmin:nodegroup"
      values   = ["false"]
    }
    condition {
      test     = "Null"
      variable = "aws:ResourceTag/podmin:nat64"
      values   = ["true"]
    }
  }

  statement {
    # Describe calls support no resource-level restriction.
    sid       = "DescribeNetworkInterfaces"
    actions   = ["ec2:DescribeNetworkInterfaces"]
    resources = ["*"]
  }

  statement {
    sid       = "SessionManager"
    actions   = local.ssm_agent_session_actions
    resources = ["*"]
  }

  statement {
    sid       = "RunCommand"
    actions   = local.ssm_agent_command_actions
    resources = ["*"]
  }
}

resource "aws_iam_role_policy" "node" {
  name   = "podmin-node"
  role   = aws_iam_role.node.id
  policy = data.aws_iam_policy_document.node.json
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
    # The manifest names the one Jool archive of this architecture.
    sid       = "ReadJoolArchive"
    actions   = ["s3:GetObject"]
    resources = ["${local.bucket_arn}/dependencies/manifest.json", "${local.bucket_arn}/dependencies/jool/*"]
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

  statement {
    sid       = "SessionManager"
    actions   = local.ssm_agent_session_actions
    resources = ["*"]
  }

  statement {
    sid       = "RunCommand"
    actions   = local.ssm_agent_command_actions
    resources = ["*"]
  }
}

resource "aws_iam_role_policy" "nat64" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  name   = "podmin-nat64"
  role   = aws_iam_role.nat64[0].id
  policy = data.aws_iam_policy_document.nat64.json
}

resource "aws_iam_instance_profile" "nat64" {
  count = length(local.nat64_instances) > 0 ? 1 : 0

  name = "${local.name_prefix}-nat64"
  role = aws_iam_role.nat64[0].name
}

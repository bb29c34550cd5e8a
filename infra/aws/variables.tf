# Inputs, all written by `podmin setup` into podmin.auto.tfvars.json. None of them is secret:
# the cluster and workload CAs live in the secret store and never enter configuration or state.

variable "cluster" {
  description = "Cluster name: tags every resource and scopes IAM to /<cluster>/* secrets."
  type        = string
  nullable    = false

  validation {
    # A DNS label short enough for IAM names such as podmin-<cluster>-nat64 (64 characters).
    condition     = can(regex("^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$", var.cluster))
    error_message = "cluster must be a lowercase DNS label of 1 to 32 characters ([a-z0-9-], no leading or trailing hyphen)."
  }
}

variable "region" {
  description = "AWS region of the cluster, e.g. us-west-2."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+$", var.region))
    error_message = "region must be an AWS region name such as us-west-2."
  }
}

variable "bucket" {
  description = "Name of the cluster bucket (created by podmin before the engine runs)."
  type        = string
  nullable    = false

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.bucket)) && !can(regex("\\.\\.", var.bucket))
    error_message = "bucket must be an S3 bucket name: 3 to 63 characters of [a-z0-9.-], starting and ending with a letter or digit."
  }
}

variable "vpc_cidr" {
  description = "Primary private IPv4 CIDR of the VPC (created, or matched by the CLI for reuse)."
  type        = string
  nullable    = false

  validation {
    # Canonical (no host bits), /16 to /24 (the NAT64 data subnets take /28s from its top), and
    # inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16: with /16 or longer, the first
    # address decides the range.
    condition = (
      can(regex("^[0-9]{1,3}(\\.[0-9]{1,3}){3}/(1[6-9]|2[0-4])$", var.vpc_cidr)) &&
      try(cidrhost(var.vpc_cidr, 0) == split("/", var.vpc_cidr)[0], false) &&
      can(regex("^(10\\.|172\\.(1[6-9]|2[0-9]|3[01])\\.|192\\.168\\.)", var.vpc_cidr))
    )
    error_message = "vpc_cidr must be a private IPv4 network in canonical form inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16, with a prefix length from /16 to /24, e.g. 10.0.0.0/16."
  }
}

variable "existing_vpc_id" {
  description = "A compatible VPC the CLI matched by its primary CIDR, reused and never destroyed; null creates one."
  type        = string
  default     = null

  validation {
    condition     = var.existing_vpc_id == null || can(regex("^vpc-[0-9a-f]{8,17}$", var.existing_vpc_id))
    error_message = "existing_vpc_id must be null or a VPC id such as vpc-0123456789abcdef0."
  }
}

variable "amis" {
  description = "The pinned Debian 13 AMI per architecture, for every architecture a NodeGroup or NAT64 instance uses."
  type        = map(string)
  nullable    = false

  validation {
    condition     = length(var.amis) > 0 && alltrue([for arch in keys(var.amis) : contains(["amd64", "arm64"], arch)])
    error_message = "amis must map at least one of the architectures amd64 and arm64, and nothing else."
  }

  validation {
    condition     = alltrue([for ami in values(var.amis) : can(regex("^ami-[0-9a-f]{8,17}$", ami))])
    error_message = "every amis value must be an AMI id such as ami-0123456789abcdef0."
  }
}

variable "nat64" {
  description = "Shared NAT64 (one instance per zone of the NodeGroups without their own); null disables it."
  type = object({
    instance_type = string
    arch          = string
  })
  default = null

  validation {
    condition     = var.nat64 == null || can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", var.nat64.instance_type))
    error_message = "nat64.instance_type must be an EC2 instance type such as t4g.nano."
  }

  validation {
    condition     = var.nat64 == null || contains(["amd64", "arm64"], try(var.nat64.arch, ""))
    error_message = "nat64.arch must be amd64 or arm64."
  }

  validation {
    condition     = var.nat64 == null || contains(keys(var.amis), try(var.nat64.arch, ""))
    error_message = "amis has no AMI for the shared NAT64 instance's architecture."
  }
}

variable "nat64_generation" {
  description = "Launch generation of the NAT64 instances; setup changes it on every run, which rolls them."
  type        = string
  nullable    = false

  validation {
    # It lands in user data, a tag and shell variables, so it stays a plain token.
    condition     = can(regex("^[A-Za-z0-9._:-]{1,128}$", var.nat64_generation))
    error_message = "nat64_generation must be 1 to 128 characters of [A-Za-z0-9._:-]."
  }
}

variable "workload_ca_publish" {
  description = "The exact external S3 object (setup --workload-ca-publish) where the leader keeps the workload CA bundle; null when none."
  type = object({
    bucket = string
    key    = string
  })
  default = null

  validation {
    condition     = var.workload_ca_publish == null || (can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", try(var.workload_ca_publish.bucket, ""))) && !can(regex("\\.\\.", try(var.workload_ca_publish.bucket, ""))))
    error_message = "workload_ca_publish.bucket must be an S3 bucket name: 3 to 63 characters of [a-z0-9.-], starting and ending with a letter or digit."
  }

  validation {
    # The key lands verbatim in IAM and endpoint policy ARNs, where * and ? are wildcards and
    # ${…} a policy variable, and in the user data's shell quoting and systemd environment:
    # only S3's safe characters without those, and no empty, . or .. segment.
    condition = var.workload_ca_publish == null || (
      can(regex("^[A-Za-z0-9!_.()-]+(/[A-Za-z0-9!_.()-]+)*$", try(var.workload_ca_publish.key, ""))) &&
      length(try(var.workload_ca_publish.key, "")) <= 1024 &&
      !can(regex("(^|/)\\.\\.?(/|$)", try(var.workload_ca_publish.key, "")))
    )
    error_message = "workload_ca_publish.key must be 1 to 1024 characters of [A-Za-z0-9!_.()-] in /-separated segments, none empty, . or .. (no *, ?, $ or quotes: it becomes an exact policy ARN)."
  }
}

variable "nodegroups" {
  description = "NodeGroups by name: one IPv6-native /64 subnet, launch template and Auto Scaling Group each."
  type = map(object({
    size          = number
    disk_size     = number
    instance_type = string
    zone          = string
    arch          = string
    nat64 = object({
      instance_type = string
      arch          = string
    })
    user_data = string
  }))
  nullable = false

  validation {
    condition     = length(var.nodegroups) > 0
    error_message = "nodegroups must name at least one NodeGroup."
  }

  validation {
    condition     = alltrue([for name in keys(var.nodegroups) : can(regex("^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$", name))])
    error_message = "every NodeGroup name must be a lowercase DNS label of at most 63 characters."
  }

  validation {
    condition     = alltrue([for ng in values(var.nodegroups) : ng.size >= 0 && ng.size <= 1000 && floor(ng.size) == ng.size])
    error_message = "every NodeGroup size must be a whole number from 0 to 1000."
  }

  validation {
    condition     = alltrue([for ng in values(var.nodegroups) : ng.disk_size >= 8 && ng.disk_size <= 16384 && floor(ng.disk_size) == ng.disk_size])
    error_message = "every NodeGroup disk_size must be a whole number of GiB from 8 to 16384."
  }

  validation {
    condition     = alltrue([for ng in values(var.nodegroups) : can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", ng.instance_type))])
    error_message = "every NodeGroup instance_type must be an EC2 instance type such as t4g.small."
  }

  validation {
    # A full zone name of this region, ending in the zone letter that also picks the NAT64 subnets.
    condition     = alltrue([for ng in values(var.nodegroups) : startswith(ng.zone, var.region) && can(regex("^[a-z]{2}(-[a-z]+)+-[0-9]+(-[a-z]+-[0-9]+)?[a-h]$", ng.zone))])
    error_message = "every NodeGroup zone must be a full availability-zone name of the region, such as us-west-2a (letters a to h)."
  }

  validation {
    condition     = alltrue([for ng in values(var.nodegroups) : contains(["amd64", "arm64"], ng.arch) && contains(keys(var.amis), ng.arch)])
    error_message = "every NodeGroup arch must be amd64 or arm64 with an AMI in amis."
  }

  validation {
    condition = alltrue([for ng in values(var.nodegroups) : ng.nat64 == null || (
      can(regex("^[a-z][a-z0-9-]*\\.[a-z0-9]+$", try(ng.nat64.instance_type, ""))) &&
      contains(["amd64", "arm64"], try(ng.nat64.arch, "")) && contains(keys(var.amis), try(ng.nat64.arch, ""))
    )])
    error_message = "every dedicated NodeGroup nat64 must have an EC2 instance_type and an arch (amd64 or arm64) with an AMI in amis."
  }

  validation {
    # EC2 limits user data to 16 KiB before base64; the module sends it gzip-compressed.
    condition     = alltrue([for ng in values(var.nodegroups) : length(trimspace(ng.user_data)) > 0 && length(base64gzip(ng.user_data)) <= 21848])
    error_message = "every NodeGroup user_data must be a non-empty script that stays within EC2's 16 KiB user-data limit after gzip."
  }

  validation {
    # Subnet slots are derived from the name (see locals.tf) so adding or removing a NodeGroup
    # never renumbers another one's subnet.
    condition     = length(distinct([for name in keys(var.nodegroups) : parseint(substr(sha256(name), 0, 4), 16) % 240])) == length(var.nodegroups)
    error_message = "two NodeGroup names map to the same IPv6 /64 slot (first 16 bits of sha256(name) modulo 240); rename one of them."
  }
}

variable "otel_logs" {
  description = "setup --otel-logs: container log export with Fluent Bit on every node, or null (Fluent Bit neither installed nor run). The node role may GetObject exactly ca_bucket/ca_key when set."
  type = object({
    endpoint       = string
    protocol       = string
    mtls           = bool
    ca_bucket      = string
    ca_key         = string
    headers_secret = bool
  })
  default = null

  validation {
    condition     = var.otel_logs == null || can(regex("^https://[!-~]+$", try(var.otel_logs.endpoint, "")))
    error_message = "otel_logs.endpoint must be an https URL of printable ASCII: TLS is mandatory."
  }

  validation {
    condition     = var.otel_logs == null || contains(["http", "grpc"], try(var.otel_logs.protocol, ""))
    error_message = "otel_logs.protocol must be http or grpc."
  }

  validation {
    # Both or neither: the exact server CA bundle object, granted as an exact policy ARN.
    # (Conditionals, not ||: Terraform evaluates both sides of ||, and a null key breaks length.)
    condition = var.otel_logs == null ? true : (
      var.otel_logs.ca_bucket == null && var.otel_logs.ca_key == null ? true : (
        var.otel_logs.ca_bucket == null || var.otel_logs.ca_key == null ? false : (
          can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.otel_logs.ca_bucket)) &&
          !can(regex("\\.\\.", var.otel_logs.ca_bucket)) &&
          can(regex("^[A-Za-z0-9!_.()-]+(/[A-Za-z0-9!_.()-]+)*$", var.otel_logs.ca_key)) &&
          length(var.otel_logs.ca_key) <= 1024 &&
          !can(regex("(^|/)\\.\\.?(/|$)", var.otel_logs.ca_key))
        )
      )
    )
    error_message = "otel_logs.ca_bucket and ca_key must both be null, or an S3 bucket name and a key of 1 to 1024 characters of [A-Za-z0-9!_.()-] in /-separated segments, none empty, . or .. (it becomes an exact policy ARN)."
  }
}

# Test only: moto 5.2.5 ignores ModifySubnetAttribute for three subnet attributes, so the
# provider would wait forever for them, and cannot launch an instance into an IPv6-only subnet
# (its ENI code needs a private IPv4), so the groups are applied with no capacity: max_size
# keeps the NodeGroup's size. Plans check the module's real values.
resource "aws_autoscaling_group" "nodegroup" {
  min_size         = 0
  desired_capacity = 0
}

resource "aws_autoscaling_group" "nat64" {
  min_size         = 0
  desired_capacity = 0
}

resource "aws_subnet" "nodegroup" {
  enable_dns64                                   = false
  enable_resource_name_dns_aaaa_record_on_launch = false
  private_dns_hostname_type_on_launch            = "ip-name"
}

resource "aws_subnet" "nat64_management" {
  enable_resource_name_dns_aaaa_record_on_launch = false
  private_dns_hostname_type_on_launch            = "ip-name"
}

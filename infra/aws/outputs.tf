output "vpc_id" {
  description = "The cluster VPC (created or reused)."
  value       = local.vpc_id
}

output "subnet_ids" {
  description = "The IPv6-native workload subnet of each NodeGroup."
  value       = { for name, subnet in aws_subnet.nodegroup : name => subnet.id }
}

output "asg_names" {
  description = "The Auto Scaling Group of each NodeGroup."
  value       = { for name, asg in aws_autoscaling_group.nodegroup : name => asg.name }
}

output "nat64_asg_names" {
  description = "The Auto Scaling Group of each NAT64 translator (shared-<zone> or nodegroup-<name>)."
  value       = { for key, asg in aws_autoscaling_group.nat64 : key => asg.name }
}

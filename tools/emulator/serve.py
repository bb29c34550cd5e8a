"""Runs moto's standalone server with every request serialised.

moto checks S3 conditional-write preconditions (If-Match / If-None-Match) and then stores the
object in two steps, and its server is threaded, so two racing writers can both pass the check
and one update is lost. Real S3 evaluates the precondition atomically. Serialising requests
through one lock gives the emulator S3's atomicity (measured: 20 concurrent `podmin deploy`
processes lost entries without it). It also fixes two EC2 subnet answers (see below). Arguments
are moto_server's own (-H HOST -p PORT ...).
"""
import os
import sys
import threading

# AWS-managed IAM policies (e.g. AmazonSSMManagedInstanceCore, which the AWS module attaches)
# exist in every AWS account; moto loads them only when asked.
os.environ.setdefault("MOTO_IAM_LOAD_MANAGED_POLICIES", "true")

import moto.server as moto_server
from moto.ec2.models import subnets as _subnets

_run_simple = moto_server.run_simple
_lock = threading.Lock()


def _serialised(app):
    def wrapped(environ, start_response):
        with _lock:
            # Drain the response inside the lock so the write completes before the next request.
            return list(app(environ, start_response))

    return wrapped


def _run_simple_serialised(host, port, app, *args, **kwargs):
    return _run_simple(host, port, _serialised(app), *args, **kwargs)


moto_server.run_simple = _run_simple_serialised


# Two moto 5.2.5 EC2 subnet bugs that stop the AWS provider from creating IPv6 subnets at all
# (found by tools/infra-tier.sh; fixed here so every client sees AWS's documented answers):
# 1. DescribeSubnets nests the IPv6 association state one level too deep
#    ({"State": {"State": "associated"}}), so the provider waits for "associated" forever.
# 2. An IPv6-only subnet counts the /64's 2^64 - 5 addresses as AvailableIpAddressCount, which
#    overflows the API's integer; AWS counts only IPv4 addresses there, so it reports 0.
def _subnet_ipv6_associations(subnet):
    return [
        {
            "ipv6CidrBlock": association["ipv6CidrBlock"],
            "associationId": association["associationId"],
            "ipv6CidrBlockState": association["ipv6CidrBlockState"],
        }
        for association in subnet.ipv6_cidr_block_associations.values()
        if association["ipv6CidrBlockState"]["State"] == "associated"
    ]


_subnet_ipv4_count = _subnets.Subnet.available_ip_address_count.fget


def _subnet_available_ip_address_count(subnet):
    return _subnet_ipv4_count(subnet) if subnet.cidr_block else 0


_subnets.Subnet.ipv6_cidr_block_association_set = property(_subnet_ipv6_associations)
_subnets.Subnet.available_ip_address_count = property(_subnet_available_ip_address_count)


def main(argv=None):
    moto_server.main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()

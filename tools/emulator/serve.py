"""Runs moto's standalone server with every request serialised.

moto checks S3 conditional-write preconditions (If-Match / If-None-Match) and then stores the
object in two steps, and its server is threaded, so two racing writers can both pass the check
and one update is lost. Real S3 evaluates the precondition atomically. Serialising requests
through one lock gives the emulator S3's atomicity (measured: 20 concurrent `podmin deploy`
processes lost entries without it). It also fixes two EC2 subnet answers and adds Auto Scaling
instance refreshes (see below). Arguments
are moto_server's own (-H HOST -p PORT ...).
"""
import datetime
import sys
import threading
import uuid


import moto.server as moto_server
from moto.autoscaling.responses import AutoScalingResponse
from moto.autoscaling.exceptions import AutoscalingClientError
from moto.autoscaling.exceptions import ValidationError as AsgValidationError
from moto.core.responses import ActionResult
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


# moto 5.2.5 has no Auto Scaling instance refresh, which the AWS provider starts whenever a
# group's launch template changes under an instance_refresh block (every NAT64 launch
# generation). AWS starts the refresh asynchronously and replaces instances over time; here a
# refresh completes at once (the emulator launches no instances into IPv6-only subnets), and a
# second refresh of the same group while one is pending is refused as AWS refuses it.
_refreshes = {}


def _refresh_key(response, name):
    return (response.current_account, response.region, name)


def _start_instance_refresh(self):
    name = self._get_param("AutoScalingGroupName")
    if name not in self.autoscaling_backend.autoscaling_groups:
        raise AsgValidationError(f"AutoScalingGroup name not found - {name}")
    history = _refreshes.setdefault(_refresh_key(self, name), [])
    now = datetime.datetime.now(datetime.timezone.utc)
    refresh = {
        "InstanceRefreshId": str(uuid.uuid4()),
        "AutoScalingGroupName": name,
        "Status": "Successful",
        "StatusReason": "The emulator replaces no instances; the refresh completes at once.",
        "StartTime": now,
        "EndTime": now,
        "PercentageComplete": 100,
        "InstancesToUpdate": 0,
        "Preferences": self._get_param("Preferences") or {},
    }
    history.insert(0, refresh)
    return ActionResult({"InstanceRefreshId": refresh["InstanceRefreshId"]})


def _describe_instance_refreshes(self):
    name = self._get_param("AutoScalingGroupName")
    wanted = set(self._get_param("InstanceRefreshIds", []) or [])
    history = _refreshes.get(_refresh_key(self, name), [])
    return ActionResult(
        {"InstanceRefreshes": [r for r in history if not wanted or r["InstanceRefreshId"] in wanted]}
    )


def _cancel_instance_refresh(self):
    name = self._get_param("AutoScalingGroupName")
    raise _AsgActiveRefreshNotFound(f"No in progress or pending Instance Refresh found for Auto Scaling group {name}")


class _AsgActiveRefreshNotFound(AutoscalingClientError):
    code = "ActiveInstanceRefreshNotFound"


AutoScalingResponse.start_instance_refresh = _start_instance_refresh
AutoScalingResponse.describe_instance_refreshes = _describe_instance_refreshes
AutoScalingResponse.cancel_instance_refresh = _cancel_instance_refresh


def main(argv=None):
    moto_server.main(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()

"""Reads and prepares the AWS-API emulator for tools/infra-tier.sh, with boto3 from the
emulator's own venv. The endpoint and fake credentials come from the environment
(AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...). Each command exits non-zero with a reason on
stderr when its check fails.

  create-bucket NAME | create-vpc CIDR | vpc-exists VPC_ID | state-stored BUCKET
  check-outputs OUTPUTS.json TFVARS.json | check-destroyed OUTPUTS.json TFVARS.json
  check-applied OUTPUTS.json TFVARS.json [SCRIPTS_DIR]
    also writes each NAT64 translator's rendered user data to SCRIPTS_DIR/<translator>.sh
    (default: nat64-scripts next to OUTPUTS.json), for the tier to lint and run.
"""
import base64
import gzip
import json
import os
import sys

import boto3

s3 = boto3.client("s3")
ec2 = boto3.client("ec2")
asg = boto3.client("autoscaling")


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def outputs(path):
    return {k: v["value"] for k, v in load(path).items()}


def create_bucket(name):
    try:
        s3.create_bucket(Bucket=name)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass


def create_vpc(cidr):
    vpc = ec2.create_vpc(CidrBlock=cidr, AmazonProvidedIpv6CidrBlock=True)["Vpc"]["VpcId"]
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsSupport={"Value": True})
    ec2.modify_vpc_attribute(VpcId=vpc, EnableDnsHostnames={"Value": True})
    print(vpc)


def vpc_exists(vpc):
    if not ec2.describe_vpcs(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Vpcs"]:
        fail(f"VPC {vpc} is gone")


def state_stored(bucket):
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    if "tfstate/podmin.tfstate" not in keys:
        fail(f"no tfstate/podmin.tfstate in {bucket}: {keys}")
    if "tfstate/podmin.tfstate.tflock" in keys:
        fail("the state lock file was left behind")
    state = json.loads(s3.get_object(Bucket=bucket, Key="tfstate/podmin.tfstate")["Body"].read())
    if not state.get("resources"):
        fail("the stored state has no resources")


def check_outputs(out_path, vars_path):
    out, tfvars = outputs(out_path), load(vars_path)
    groups = sorted(tfvars["nodegroups"])
    if not out["vpc_id"].startswith("vpc-"):
        fail(f"vpc_id output {out['vpc_id']}")
    if tfvars["existing_vpc_id"] and out["vpc_id"] != tfvars["existing_vpc_id"]:
        fail(f"vpc_id {out['vpc_id']} is not the reused {tfvars['existing_vpc_id']}")
    if sorted(out["subnet_ids"]) != groups or sorted(out["asg_names"]) != groups:
        fail(f"outputs {out} do not name every NodeGroup {groups}")


def check_applied(out_path, vars_path, scripts_dir=None):
    out, tfvars = outputs(out_path), load(vars_path)
    scripts_dir = scripts_dir or os.path.join(os.path.dirname(os.path.abspath(out_path)), "nat64-scripts")
    os.makedirs(scripts_dir, exist_ok=True)
    cluster = tfvars["cluster"]
    problems = []
    subnets = {s["SubnetId"]: s for s in ec2.describe_subnets(SubnetIds=list(out["subnet_ids"].values()))["Subnets"]}
    for name, subnet_id in out["subnet_ids"].items():
        s = subnets[subnet_id]
        cidrs = [a["Ipv6CidrBlock"] for a in s.get("Ipv6CidrBlockAssociationSet", [])]
        if not s.get("Ipv6Native") or len(cidrs) != 1 or not cidrs[0].endswith("/64"):
            problems.append(f"subnet {name} is not IPv6-native with one /64: {cidrs}")
        if s["AvailabilityZone"] != tfvars["nodegroups"][name]["zone"]:
            problems.append(f"subnet {name} is in {s['AvailabilityZone']}")
    groups = asg.describe_auto_scaling_groups(AutoScalingGroupNames=list(out["asg_names"].values()))["AutoScalingGroups"]
    # Applied with no capacity (the emulator cannot launch into IPv6-only subnets): max_size
    # still carries the NodeGroup's size.
    if len(groups) != len(out["asg_names"]):
        problems.append(f"{len(groups)} NodeGroup ASGs in the emulator, want {len(out['asg_names'])}")
    for g in groups:
        name = next(k for k, v in out["asg_names"].items() if v == g["AutoScalingGroupName"])
        ng = tfvars["nodegroups"][name]
        if g["MaxSize"] != ng["size"] or g["VPCZoneIdentifier"] != out["subnet_ids"][name]:
            problems.append(f"ASG {name}: max {g['MaxSize']}, subnets {g['VPCZoneIdentifier']}")
        template = g["LaunchTemplate"]
        data = ec2.describe_launch_template_versions(
            LaunchTemplateId=template["LaunchTemplateId"], Versions=[str(template["Version"])]
        )["LaunchTemplateVersions"][0]["LaunchTemplateData"]
        enis = sorted(data["NetworkInterfaces"], key=lambda n: n["DeviceIndex"])
        if [(n["DeviceIndex"], n.get("Ipv6AddressCount"), n["SubnetId"]) for n in enis] != [
            (0, 1, out["subnet_ids"][name]),
            (1, 1, out["subnet_ids"][name]),
        ]:
            problems.append(f"launch template of {name} has ENIs {enis}")
        ebs = data["BlockDeviceMappings"][0]["Ebs"]
        if (ebs.get("VolumeType"), ebs.get("Encrypted"), ebs.get("VolumeSize")) != ("gp3", True, ng["disk_size"]):
            problems.append(f"launch template of {name} has root volume {ebs}")
        if data["ImageId"] != tfvars["amis"][ng["arch"]] or data["InstanceType"] != ng["instance_type"]:
            problems.append(f"launch template of {name} has {data['ImageId']} {data['InstanceType']}")
        specs = {s["ResourceType"]: {t["Key"]: t["Value"] for t in s["Tags"]} for s in data["TagSpecifications"]}
        for kind in ("instance", "network-interface"):
            if specs.get(kind, {}).get("podmin:nodegroup") != name or specs[kind].get("podmin:cluster") != cluster:
                problems.append(f"launch template of {name} tags {kind} with {specs.get(kind)}")
        if gzip.decompress(base64.b64decode(data["UserData"])).decode() != ng["user_data"]:
            problems.append(f"launch template of {name} does not carry the NodeGroup's user data")
    enis = ec2.describe_network_interfaces(Filters=[{"Name": "tag:podmin:cluster", "Values": [cluster]}])["NetworkInterfaces"]
    translators = [e for e in enis if any(t["Key"] == "podmin:nat64" for t in e.get("TagSet", []))]
    want = len({g["zone"] for g in tfvars["nodegroups"].values() if not g["nat64"]} if tfvars["nat64"] else set())
    want += sum(1 for g in tfvars["nodegroups"].values() if g["nat64"])
    if len(translators) != want:
        problems.append(f"{len(translators)} tagged NAT64 data ENIs, want {want}")
    want_translators = want
    for e in translators:
        if e.get("SourceDestCheck") or not e.get("Ipv6Addresses") or not e.get("Association", {}).get("PublicIp"):
            problems.append(f"NAT64 data ENI {e['NetworkInterfaceId']} lacks forwarding, IPv6 or its EIP")
    # The NAT64 user data (unknown at plan time) as EC2 holds it: gzip, base64 once, naming the
    # generation, its own stable data ENI and Jool in Netfilter mode.
    eni_by_translator = {
        next(t["Value"] for t in e["TagSet"] if t["Key"] == "podmin:nat64"): e["NetworkInterfaceId"] for e in translators
    }
    for key, name in out.get("nat64_asg_names", {}).items():
        script = group_user_data(name)
        with open(os.path.join(scripts_dir, f"{key}.sh"), "w", encoding="utf-8") as f:
            f.write(script)
        for want in (
            f"generation='{tfvars['nat64_generation']}'",
            f"data_eni='{eni_by_translator.get(key)}'",
            "--netfilter --pool6",
            "'64:ff9b::a9fe:0/112'",
        ):
            if want not in script:
                problems.append(f"NAT64 {key} user data lacks {want}")
    if len(out.get("nat64_asg_names", {})) != want_translators:
        problems.append(f"nat64_asg_names {out.get('nat64_asg_names')} has not {want_translators} translators")
    if problems:
        fail("; ".join(problems))


def group_user_data(name):
    """The user data an Auto Scaling group launches with: its launch template version's, decoded."""
    template = asg.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]["LaunchTemplate"]
    version = ec2.describe_launch_template_versions(
        LaunchTemplateId=template["LaunchTemplateId"], Versions=[str(template["Version"])]
    )["LaunchTemplateVersions"][0]
    return gzip.decompress(base64.b64decode(version["LaunchTemplateData"]["UserData"])).decode()


def check_refreshed(out_path, generation):
    out = outputs(out_path)
    problems = []
    for key, name in out.get("nat64_asg_names", {}).items():
        script = group_user_data(name)
        if f"generation='{generation}'" not in script:
            problems.append(f"NAT64 {key} launches no generation {generation}")
        refreshes = asg.describe_instance_refreshes(AutoScalingGroupName=name)["InstanceRefreshes"]
        done = [r for r in refreshes if r["Status"] == "Successful"]
        if not done:
            problems.append(f"NAT64 {key} group {name} ran no instance refresh: {refreshes}")
        # Launch before terminate: never below the one translator, up to two while replacing.
        for r in done:
            prefs = r.get("Preferences", {})
            if (prefs.get("MinHealthyPercentage"), prefs.get("MaxHealthyPercentage")) != (100, 200):
                problems.append(f"NAT64 {key} refresh is not launch-before-terminate: {prefs}")
    if not out.get("nat64_asg_names"):
        problems.append("no NAT64 groups in the outputs")
    if problems:
        fail("; ".join(problems))


def check_destroyed(out_path, vars_path):
    out, tfvars = outputs(out_path), load(vars_path)
    problems = []
    left = ec2.describe_subnets(Filters=[{"Name": "tag:podmin:cluster", "Values": [tfvars["cluster"]]}])["Subnets"]
    if left:
        problems.append(f"subnets left: {[s['SubnetId'] for s in left]}")
    groups = asg.describe_auto_scaling_groups(AutoScalingGroupNames=list(out["asg_names"].values()))["AutoScalingGroups"]
    if groups:
        problems.append(f"ASGs left: {[g['AutoScalingGroupName'] for g in groups]}")
    enis = ec2.describe_network_interfaces(Filters=[{"Name": "tag:podmin:cluster", "Values": [tfvars["cluster"]]}])["NetworkInterfaces"]
    if enis:
        problems.append(f"ENIs left: {[e['NetworkInterfaceId'] for e in enis]}")
    vpcs = ec2.describe_vpcs(Filters=[{"Name": "vpc-id", "Values": [out["vpc_id"]]}])["Vpcs"]
    if not tfvars["existing_vpc_id"] and vpcs:
        problems.append(f"the created VPC {out['vpc_id']} is left")
    if problems:
        fail("; ".join(problems))


COMMANDS = {
    "create-bucket": create_bucket,
    "create-vpc": create_vpc,
    "vpc-exists": vpc_exists,
    "state-stored": state_stored,
    "check-outputs": check_outputs,
    "check-applied": check_applied,
    "check-refreshed": check_refreshed,
    "check-destroyed": check_destroyed,
}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](*sys.argv[2:])

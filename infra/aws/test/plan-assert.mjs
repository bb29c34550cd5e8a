#!/usr/bin/env node
// Checks a plan of infra/aws (`tofu show -json`) against the tfvars it was made from: what the
// spec requires of subnets, launch templates, volumes, Auto Scaling Groups, NAT64, the S3
// endpoint, IAM, security groups and tags, with the expectations computed here independently of
// the module's own locals. Prints `PASS <check>` / `FAIL <check>: <why>` lines for
// tools/infra-tier.sh and exits 1 on any failure.
//   node plan-assert.mjs <plan.json> <tfvars.json>
import fs from 'node:fs';
import zlib from 'node:zlib';
import { canonicalPolicy, expectedPolicies } from './expected-policies.mjs';

const [planFile, varsFile] = process.argv.slice(2);
const plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
const vars = JSON.parse(fs.readFileSync(varsFile, 'utf8'));
const changes = plan.resource_changes ?? [];
const created = changes.filter((c) => c.mode === 'managed' && c.change.actions.includes('create'));
const byType = (type) => created.filter((c) => c.type === type);
const byAddress = (address) => created.find((c) => c.address === address)?.change.after;
let failures = 0;

function check(name, problems) {
  const list = problems.filter(Boolean);
  if (list.length === 0) {
    process.stdout.write(`PASS ${name}\n`);
  } else {
    failures += 1;
    process.stdout.write(`FAIL ${name}: ${list.join('; ')}\n`);
  }
}
const expectEq = (what, got, want) =>
  JSON.stringify(got) === JSON.stringify(want)
    ? null
    : `${what} is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`;

const groups = Object.entries(vars.nodegroups);
// The translators the spec asks for: one shared per zone of NodeGroups without their own when
// NAT64 is on, one dedicated per NodeGroup with nat64 set.
const sharedZones = vars.nat64
  ? [...new Set(groups.filter(([, g]) => !g.nat64).map(([, g]) => g.zone))]
  : [];
const translators = [
  ...sharedZones.map((z) => `shared-${z}`),
  ...groups.filter(([, g]) => g.nat64).map(([n]) => `nodegroup-${n}`),
];
const servedByNat64 = (g) => Boolean(g.nat64) || Boolean(vars.nat64);
// The emulator's account; the partition of every region it serves.
const expected = expectedPolicies(vars, 'aws', '123456789012');
// Every statement of a policy, exactly: the same Sids, and each one's actions, resources,
// conditions and principals.
function statementProblems(what, json, want) {
  if (typeof json !== 'string') return [`${what}: no policy document in the plan`];
  const got = canonicalPolicy(json);
  const problems = [
    expectEq(
      `${what} statements`,
      got.map((s) => s.sid),
      want.map((s) => s.sid),
    ),
  ];
  for (const w of want) {
    const g = got.find((s) => s.sid === w.sid);
    if (g) problems.push(expectEq(`${what} ${w.sid}`, g, w));
  }
  for (const g of got) {
    if (g.actions.some((a) => a.includes('*'))) problems.push(`${what} ${g.sid}: wildcard action`);
  }
  return problems;
}

check('the VPC is created with an Amazon-provided IPv6 block only when none is reused', [
  expectEq('aws_vpc count', byType('aws_vpc').length, vars.existing_vpc_id === null ? 1 : 0),
  ...byType('aws_vpc').map((v) =>
    v.change.after.assign_generated_ipv6_cidr_block === true &&
    v.change.after.cidr_block === vars.vpc_cidr
      ? null
      : `${v.address} lacks the generated IPv6 block or the CIDR ${vars.vpc_cidr}`,
  ),
]);

check(
  'one IPv6-native subnet per NodeGroup, DNS64 exactly where NAT64 serves it',
  groups.map(([name, g]) => {
    const s = byAddress(`aws_subnet.nodegroup["${name}"]`);
    if (!s) return `no subnet for ${name}`;
    const wrong = [];
    if (s.ipv6_native !== true) wrong.push('ipv6_native');
    if (s.assign_ipv6_address_on_creation !== true) wrong.push('assign_ipv6_address_on_creation');
    if (s.cidr_block) wrong.push('has an IPv4 CIDR');
    if (s.availability_zone !== g.zone) wrong.push(`zone ${s.availability_zone}`);
    if (s.enable_dns64 !== servedByNat64(g)) wrong.push(`enable_dns64=${s.enable_dns64}`);
    // IPv6-only subnets need resource-name hostnames; AAAA records make them resolvable.
    if (s.private_dns_hostname_type_on_launch !== 'resource-name') wrong.push('hostname type');
    if (s.enable_resource_name_dns_aaaa_record_on_launch !== true) wrong.push('no AAAA record');
    return wrong.length ? `${name}: ${wrong.join(', ')}` : null;
  }),
);

check(
  'launch templates: AMI per arch, two IPv6 ENIs, encrypted GP3 root of disk_size, IMDSv2 over IPv6',
  groups.map(([name, g]) => {
    const lt = byAddress(`aws_launch_template.nodegroup["${name}"]`);
    if (!lt) return `no launch template for ${name}`;
    const enis = [...lt.network_interfaces].sort(
      (a, b) => Number(a.device_index) - Number(b.device_index),
    );
    const ebs = lt.block_device_mappings?.[0]?.ebs?.[0] ?? {};
    const md = lt.metadata_options?.[0] ?? {};
    return (
      [
        expectEq(`${name} image`, lt.image_id, vars.amis[g.arch]),
        expectEq(`${name} instance type`, lt.instance_type, g.instance_type),
        expectEq(
          `${name} ENI device indexes`,
          enis.map((e) => Number(e.device_index)),
          [0, 1],
        ),
        expectEq(
          `${name} IPv6 addresses per ENI`,
          enis.map((e) => Number(e.ipv6_address_count)),
          [1, 1],
        ),
        expectEq(
          `${name} root volume`,
          [ebs.volume_type, String(ebs.encrypted), Number(ebs.volume_size)],
          ['gp3', 'true', g.disk_size],
        ),
        expectEq(`${name} IMDS`, [md.http_tokens, md.http_protocol_ipv6], ['required', 'enabled']),
      ]
        .filter(Boolean)
        .join('; ') || null
    );
  }),
);

check(
  'user data is the rendered script, gzip then base64 once',
  groups.map(([name, g]) => {
    const lt = byAddress(`aws_launch_template.nodegroup["${name}"]`);
    const text = lt ? zlib.gunzipSync(Buffer.from(lt.user_data, 'base64')).toString('utf8') : '';
    return text === g.user_data ? null : `${name}: user data does not decode to the tfvars script`;
  }),
);

check(
  'instances, ENIs and volumes are tagged podmin:cluster and podmin:nodegroup',
  groups.map(([name]) => {
    const lt = byAddress(`aws_launch_template.nodegroup["${name}"]`);
    const specs = Object.fromEntries(
      (lt?.tag_specifications ?? []).map((t) => [t.resource_type, t.tags]),
    );
    return (
      ['instance', 'network-interface']
        .map((kind) =>
          specs[kind]?.['podmin:cluster'] === vars.cluster &&
          specs[kind]?.['podmin:nodegroup'] === name
            ? null
            : `${name} ${kind} tags ${JSON.stringify(specs[kind])}`,
        )
        .filter(Boolean)
        .join('; ') || null
    );
  }),
);

check(
  'one Auto Scaling Group per NodeGroup sized min = max = desired = size',
  groups.map(([name, g]) => {
    const asg = byAddress(`aws_autoscaling_group.nodegroup["${name}"]`);
    return asg
      ? expectEq(
          `${name} sizes`,
          [asg.min_size, asg.max_size, asg.desired_capacity],
          [g.size, g.size, g.size],
        )
      : `no ASG for ${name}`;
  }),
);

check('NAT64: one size-one ASG, stable data ENI and EIP per translator, as the spec assigns them', [
  expectEq(
    'translator ASGs',
    byType('aws_autoscaling_group')
      .filter((c) => c.name === 'nat64')
      .map((c) => c.index)
      .sort(),
    [...translators].sort(),
  ),
  expectEq(
    'data ENIs',
    byType('aws_network_interface')
      .map((c) => c.index)
      .sort(),
    [...translators].sort(),
  ),
  expectEq(
    'EIPs',
    byType('aws_eip')
      .map((c) => c.index)
      .sort(),
    [...translators].sort(),
  ),
  expectEq(
    'internet gateways',
    byType('aws_internet_gateway').length,
    translators.length > 0 ? 1 : 0,
  ),
  ...translators.map((t) => {
    const asg = byAddress(`aws_autoscaling_group.nat64["${t}"]`);
    const eni = byAddress(`aws_network_interface.nat64_data["${t}"]`);
    return (
      [
        expectEq(
          `${t} ASG sizes`,
          [asg?.min_size, asg?.max_size, asg?.desired_capacity],
          [1, 1, 1],
        ),
        expectEq(`${t} data ENI`, [eni?.source_dest_check, eni?.ipv6_address_count], [false, 1]),
        asg?.instance_refresh?.[0]?.preferences?.[0]?.max_healthy_percentage === 200
          ? null
          : `${t}: no launch-before-terminate refresh`,
      ]
        .filter(Boolean)
        .join('; ') || null
    );
  }),
]);

check(
  '64:ff9b::/96 routes to the translator serving each NodeGroup, and only there',
  (() => {
    const routes = created.filter(
      (c) =>
        c.type === 'aws_route' && c.change.after.destination_ipv6_cidr_block === '64:ff9b::/96',
    );
    const want = groups
      .filter(([, g]) => servedByNat64(g))
      .map(([n]) => n)
      .sort();
    return [expectEq('NodeGroups with a NAT64 route', routes.map((r) => r.index).sort(), want)];
  })(),
);

// The NAT64 user data depends on the data ENI's id, so it is unknown until apply; the tier
// checks the rendered script in the emulator after apply (emulator.py check-applied).
check(
  'NAT64 launch templates: one IPv6-only management ENI, the launch generation tagged on what they launch',
  translators.map((t) => {
    const lt = byAddress(`aws_launch_template.nat64["${t}"]`);
    if (!lt) return `no launch template for ${t}`;
    const wrong = [];
    const enis = lt.network_interfaces ?? [];
    if (enis.length !== 1 || Number(enis[0].ipv6_address_count) !== 1) wrong.push('management ENI');
    const instance = (lt.tag_specifications ?? []).find((s) => s.resource_type === 'instance');
    if (instance?.tags?.['podmin:nat64-generation'] !== vars.nat64_generation)
      wrong.push('generation tag');
    return wrong.length ? `${t}: ${wrong.join(', ')}` : null;
  }),
);

check(
  'the S3 gateway endpoint is dual-stack and its policy admits exactly the cluster bucket, the SSM Agent package path and the --workload-ca-publish object',
  (() => {
    const ep = byType('aws_vpc_endpoint')[0]?.change.after;
    if (!ep) return ['no S3 endpoint'];
    return [
      expectEq(
        'endpoint',
        [ep.vpc_endpoint_type, ep.ip_address_type, ep.service_name],
        ['Gateway', 'dualstack', `com.amazonaws.${vars.region}.s3`],
      ),
      ...statementProblems('endpoint policy', ep.policy, expected.s3_endpoint),
    ];
  })(),
);

check(
  'node IAM: every statement exactly (cluster objects, coordination writes, receipts, parameters, secrets, Pod prefix, SSM Agent), no wildcard action',
  (() => {
    const role = created.find((c) => c.address === 'aws_iam_role_policy.node')?.change.after;
    if (!role) return ['no node role policy'];
    const statements = canonicalPolicy(role.policy);
    return [
      ...statementProblems('node policy', role.policy, expected.node),
      statements.some((s) => s.resources.some((r) => r.includes(':::' + vars.bucket + '/tfstate')))
        ? 'nodes may reach tfstate/'
        : null,
    ];
  })(),
);

check(
  'NAT64 IAM: every statement exactly, only when a translator exists',
  (() => {
    const role = created.find((c) => c.address === 'aws_iam_role_policy.nat64[0]')?.change.after;
    if (expected.nat64 === null) return [role ? 'a NAT64 role policy without translators' : null];
    if (!role) return ['no NAT64 role policy'];
    return statementProblems('NAT64 policy', role.policy, expected.nat64);
  })(),
);

check('no managed policy: no attachment, no managed_policy_arns, one inline policy per role', [
  expectEq(
    'policy attachments',
    created
      .filter((c) => c.type.startsWith('aws_iam_') && c.type.includes('policy_attachment'))
      .map((c) => c.address),
    [],
  ),
  ...byType('aws_iam_role').map((c) =>
    (c.change.after.managed_policy_arns ?? []).length > 0
      ? `${c.address} has managed_policy_arns`
      : null,
  ),
  expectEq(
    'inline role policies',
    byType('aws_iam_role_policy')
      .map((c) => c.address)
      .sort(),
    [
      'aws_iam_role_policy.node',
      ...(expected.nat64 ? ['aws_iam_role_policy.nat64[0]'] : []),
    ].sort(),
  ),
]);

check(
  'security groups: leader TCP 8081 between nodes, workload traffic from NodeGroup subnets, no SSH',
  (() => {
    const ingress = byType('aws_vpc_security_group_ingress_rule').map((c) => c.change.after);
    return [
      ingress.some((r) => r.ip_protocol === 'tcp' && r.from_port === 8081 && r.to_port === 8081)
        ? null
        : 'no TCP 8081 rule',
      expectEq(
        'workload rules',
        byType('aws_vpc_security_group_ingress_rule')
          .filter((c) => c.name === 'node_workload')
          .map((c) => c.index)
          .sort(),
        groups.map(([n]) => n).sort(),
      ),
      ingress.some((r) => r.from_port !== null && r.from_port <= 22 && r.to_port >= 22)
        ? 'a rule admits port 22'
        : null,
      ingress.some((r) => r.cidr_ipv4 || r.cidr_ipv6 === '::/0')
        ? 'an ingress rule admits the internet'
        : null,
    ];
  })(),
);

check(
  'every taggable resource carries podmin:cluster',
  created
    .filter(
      (c) => c.change.after && 'tags_all' in c.change.after && c.change.after.tags_all !== null,
    )
    .map((c) =>
      c.change.after.tags_all['podmin:cluster'] === vars.cluster
        ? null
        : `${c.address} lacks podmin:cluster`,
    ),
);

process.exit(failures > 0 ? 1 : 0);

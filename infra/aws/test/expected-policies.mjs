#!/usr/bin/env node
// The exact IAM statements of infra/aws, computed from the tfvars alone, independently of the
// module's locals: the node role, the NAT64 role (when a translator exists) and the S3 gateway
// endpoint. plan-assert.mjs holds a plan's policies to them and test/hclcheck the module's HCL;
// infra/aws/README.md says why each statement exists. Statements are in canonical form: sid,
// effect, sorted actions and resources, sorted conditions { test, variable, values } and
// principals { type, identifiers }.
//   node expected-policies.mjs <tfvars.json> [partition] [account-id]   prints them as JSON
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';

const sorted = (list) => [...list].sort();

/** One statement in canonical form. */
export function statement({ sid, actions, resources, conditions = [], principals = [] }) {
  return {
    sid,
    effect: 'Allow',
    actions: sorted(actions),
    resources: sorted(resources),
    conditions: conditions
      .map((c) => ({ test: c.test, variable: c.variable, values: sorted(c.values) }))
      .sort((a, b) => `${a.test} ${a.variable}`.localeCompare(`${b.test} ${b.variable}`)),
    principals: principals
      .map((p) => ({ type: p.type, identifiers: sorted(p.identifiers) }))
      .sort((a, b) => a.type.localeCompare(b.type)),
  };
}

// SSM Agent, as AWS documents it: Session Manager's minimal instance permissions
// (systems-manager userguide, getting-started-create-iam-instance-profile) and Run Command's
// ec2messages calls (systems-manager-setting-up-messageAPIs). No resource-level permissions.
const SESSION_MANAGER = [
  'ssm:UpdateInstanceInformation',
  'ssmmessages:CreateControlChannel',
  'ssmmessages:CreateDataChannel',
  'ssmmessages:OpenControlChannel',
  'ssmmessages:OpenDataChannel',
];
const RUN_COMMAND = [
  'ec2messages:AcknowledgeMessage',
  'ec2messages:DeleteMessage',
  'ec2messages:FailMessage',
  'ec2messages:GetEndpoint',
  'ec2messages:GetMessages',
  'ec2messages:SendReply',
];

/** Whether the tfvars ask for at least one NAT64 translator (shared or dedicated). */
export function hasTranslators(vars) {
  const groups = Object.values(vars.nodegroups);
  return groups.some((g) => g.nat64) || (Boolean(vars.nat64) && groups.some((g) => !g.nat64));
}

/** The statements of every policy the module writes, by policy. */
export function expectedPolicies(vars, partition = 'aws', account = '123456789012') {
  const bucket = `arn:${partition}:s3:::${vars.bucket}`;
  const readKeys = [
    'apps/*',
    'mirror/*',
    'dependencies/*',
    'deployments/index.json',
    'nodegroups/*/pods/sha512/*',
    'services/*/*/sha512/*',
    'dns/leader.json',
    'dns/services.pb',
    'dns/rollouts.json',
    'identity/ca.json',
  ];
  const publish = vars.workload_ca_publish
    ? `arn:${partition}:s3:::${vars.workload_ca_publish.bucket}/${vars.workload_ca_publish.key}`
    : undefined;
  const otelCa =
    vars.otel_logs && vars.otel_logs.ca_key
      ? `arn:${partition}:s3:::${vars.otel_logs.ca_bucket}/${vars.otel_logs.ca_key}`
      : undefined;
  const eni = `arn:${partition}:ec2:${vars.region}:${account}:network-interface/*`;
  const ssmAgent = [
    statement({ sid: 'SessionManager', actions: SESSION_MANAGER, resources: ['*'] }),
    statement({ sid: 'RunCommand', actions: RUN_COMMAND, resources: ['*'] }),
  ];
  const node = [
    statement({
      sid: 'ReadClusterObjects',
      actions: ['s3:GetObject'],
      resources: readKeys.map((k) => `${bucket}/${k}`),
    }),
    statement({
      sid: 'ListClusterObjects',
      actions: ['s3:ListBucket'],
      resources: [bucket],
      conditions: [{ test: 'StringLike', variable: 's3:prefix', values: readKeys }],
    }),
    statement({
      sid: 'WriteCoordinationObjects',
      actions: ['s3:PutObject'],
      resources: [
        'dns/leader.json',
        'dns/services.pb',
        'dns/rollouts.json',
        'identity/ca.json',
      ].map((k) => `${bucket}/${k}`),
    }),
    statement({
      sid: 'WriteReceipts',
      actions: ['s3:PutObject'],
      resources: [`${bucket}/status/*/i-*.json`],
    }),
    ...(publish
      ? [
          statement({
            sid: 'PublishWorkloadCaBundle',
            actions: ['s3:GetObject', 's3:PutObject'],
            resources: [publish],
          }),
        ]
      : []),
    ...(otelCa
      ? [statement({ sid: 'ReadOtelLogsCaBundle', actions: ['s3:GetObject'], resources: [otelCa] })]
      : []),
    statement({
      sid: 'ReadClusterParameters',
      actions: ['ssm:GetParameter'],
      resources: [`arn:${partition}:ssm:${vars.region}:${account}:parameter/${vars.cluster}/*`],
    }),
    statement({
      sid: 'ReadClusterSecrets',
      actions: ['secretsmanager:GetSecretValue'],
      resources: [
        `arn:${partition}:secretsmanager:${vars.region}:${account}:secret:/${vars.cluster}/*`,
      ],
    }),
    statement({
      sid: 'AssignPodPrefix',
      actions: ['ec2:AssignIpv6Addresses'],
      resources: [eni],
      conditions: [
        {
          test: 'StringEquals',
          variable: 'aws:ResourceTag/podmin:cluster',
          values: [vars.cluster],
        },
        { test: 'Null', variable: 'aws:ResourceTag/podmin:nodegroup', values: ['false'] },
        { test: 'Null', variable: 'aws:ResourceTag/podmin:nat64', values: ['true'] },
      ],
    }),
    statement({
      sid: 'DescribeNetworkInterfaces',
      actions: ['ec2:DescribeNetworkInterfaces'],
      resources: ['*'],
    }),
    ...ssmAgent,
  ];
  const nat64 = hasTranslators(vars)
    ? [
        statement({
          sid: 'ReadJoolArchive',
          actions: ['s3:GetObject'],
          resources: [`${bucket}/dependencies/manifest.json`, `${bucket}/dependencies/jool/*`],
        }),
        statement({
          sid: 'HandOffDataEni',
          actions: ['ec2:AttachNetworkInterface', 'ec2:DetachNetworkInterface', 'ec2:CreateTags'],
          resources: [eni, `arn:${partition}:ec2:${vars.region}:${account}:instance/*`],
          conditions: [
            {
              test: 'StringEquals',
              variable: 'aws:ResourceTag/podmin:cluster',
              values: [vars.cluster],
            },
          ],
        }),
        statement({
          sid: 'DescribeForHandOff',
          actions: ['ec2:DescribeNetworkInterfaces', 'ec2:DescribeInstances'],
          resources: ['*'],
        }),
        statement({
          sid: 'CompleteLaunch',
          actions: ['autoscaling:CompleteLifecycleAction'],
          resources: [
            `arn:${partition}:autoscaling:${vars.region}:${account}:autoScalingGroup:*:autoScalingGroupName/podmin-${vars.cluster}-nat64-*`,
          ],
        }),
        ...ssmAgent,
      ]
    : null;
  const anyone = [{ type: '*', identifiers: ['*'] }];
  const s3Endpoint = [
    statement({
      sid: 'ClusterBucket',
      actions: ['s3:GetObject', 's3:PutObject', 's3:ListBucket'],
      resources: [bucket, `${bucket}/*`],
      principals: anyone,
    }),
    ...(publish
      ? [
          statement({
            sid: 'WorkloadCaBundle',
            actions: ['s3:GetObject', 's3:PutObject'],
            resources: [publish],
            principals: anyone,
          }),
        ]
      : []),
    ...(otelCa
      ? [
          statement({
            sid: 'OtelLogsCaBundle',
            actions: ['s3:GetObject'],
            resources: [otelCa],
            principals: anyone,
          }),
        ]
      : []),
    statement({
      sid: 'SsmAgentPackage',
      actions: ['s3:GetObject'],
      resources: [`arn:${partition}:s3:::amazon-ssm-${vars.region}/latest/debian_*`],
      principals: anyone,
    }),
  ];
  return { node, nat64, s3_endpoint: s3Endpoint };
}

/**
 * A policy document as IAM JSON (what the provider's aws_iam_policy_document renders) in the
 * canonical form above.
 */
export function canonicalPolicy(json) {
  const doc = typeof json === 'string' ? JSON.parse(json) : json;
  const list = (v) => (v === undefined ? [] : [v].flat());
  return doc.Statement.map((s) =>
    Object.assign(
      statement({
        sid: s.Sid,
        actions: list(s.Action),
        resources: list(s.Resource),
        conditions: Object.entries(s.Condition ?? {}).flatMap(([test, vars]) =>
          Object.entries(vars).map(([variable, values]) => ({
            test,
            variable,
            values: list(values),
          })),
        ),
        principals:
          s.Principal === undefined
            ? []
            : s.Principal === '*'
              ? [{ type: '*', identifiers: ['*'] }]
              : Object.entries(s.Principal).map(([type, ids]) => ({
                  type,
                  identifiers: list(ids),
                })),
      }),
      { effect: s.Effect ?? 'Allow' },
      // Statements that grant by NotAction/NotResource or deny are not in the expectations.
      s.NotAction || s.NotResource || s.NotPrincipal ? { not: true } : {},
    ),
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [varsFile, partition, account] = process.argv.slice(2);
  if (!varsFile) {
    process.stderr.write('usage: expected-policies.mjs <tfvars.json> [partition] [account-id]\n');
    process.exit(2);
  }
  const vars = JSON.parse(fs.readFileSync(varsFile, 'utf8'));
  process.stdout.write(`${JSON.stringify(expectedPolicies(vars, partition, account), null, 2)}\n`);
}

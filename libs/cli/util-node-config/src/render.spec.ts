import { parse } from 'yaml';
import { NODE_PROFILES, type NodeProfile } from './profiles';
import {
  NODE_CONFIG_PATHS,
  renderNodeConfig,
  type NodeConfig,
  type NodeConfigInput,
} from './render';

const input: NodeConfigInput = {
  root: '/n',
  containerdState: '/run/containerd',
  containerdSocket: '/run/containerd/containerd.sock',
  cniBinDir: '/opt/cni/bin',
  kubeletRootDir: '/var/lib/kubelet',
  nodeAddress: '2600:1f14:aaaa:bb01::10',
  podPrefix: '2600:1f14:aaaa:bb01:1234::/80',
  sandboxImage: 'registry.podmin.internal/mirror/registry.k8s.io/pause@sha256:' + '3'.repeat(64),
  registryListen: '127.0.0.1:5000',
  serviceDnsListen: '127.0.0.1:1053',
  upstreamResolvConf: '/etc/resolv.conf',
  systemReserved: { cpu: '100m', memory: '496Mi' },
  hostname: 'workers',
};

/** Per file: the lines only the first rendering has and the lines only the second has. */
function lineDiff(a: NodeConfig, b: NodeConfig): Record<string, { only: string[][] }> {
  const byPath = (c: NodeConfig) => new Map(c.files.map((f) => [f.path, f.content]));
  const [left, right] = [byPath(a), byPath(b)];
  const diff: Record<string, { only: string[][] }> = {};
  for (const file of [...new Set([...left.keys(), ...right.keys()])].sort()) {
    const l = (left.get(file) ?? '').split('\n');
    const r = (right.get(file) ?? '').split('\n');
    const minus = (x: string[], y: string[]) => {
      const rest = [...y];
      return x.filter((line) => {
        const i = rest.indexOf(line);
        if (i === -1) return true;
        rest.splice(i, 1);
        return false;
      });
    };
    const only = [minus(l, r), minus(r, l)];
    if (only[0]!.length > 0 || only[1]!.length > 0) diff[file] = { only };
  }
  return diff;
}

describe('the aws and local profiles', () => {
  const aws = renderNodeConfig('aws', input);
  const local = renderNodeConfig('local', input);

  it('differ in exactly the named fields, each of which changes the rendering', () => {
    const fields = Object.keys(NODE_PROFILES.aws) as Array<keyof NodeProfile>;
    expect(Object.keys(NODE_PROFILES.local).sort()).toEqual([...fields].sort());
    const differing = fields.filter((f) => NODE_PROFILES.aws[f] !== NODE_PROFILES.local[f]);
    expect(differing.sort()).toEqual(
      [
        'allowCgroupV1',
        'allowSwap',
        'cgroupDriver',
        'enforceNodeAllocatable',
        'hostnameOverride',
        'kubeletPortsOff',
        'restrictOomScoreAdj',
        'runtime',
      ].sort(),
    );
    // No field is decoration: taking the local value of any one of them changes what an AWS
    // node is given (cgroupDriver alone reaches the runtime only through runc's options).
    for (const field of differing) {
      const one = { ...NODE_PROFILES.aws, [field]: NODE_PROFILES.local[field] };
      expect({ field, same: renderNodeConfig(one, input) }).not.toEqual({ field, same: aws });
    }
  });

  it('render the same input into files that differ exactly by those fields', () => {
    const runtime = "[plugins.'io.containerd.cri.v1.runtime'";
    expect(lineDiff(aws, local)).toEqual({
      [NODE_CONFIG_PATHS.containerdConfig]: {
        only: [
          [
            "  default_runtime_name = 'runsc'",
            `${runtime}.containerd.runtimes.runsc]`,
            "  runtime_type = 'io.containerd.runsc.v1'",
            `${runtime}.containerd.runtimes.runsc.options]`,
            "  TypeUrl = 'io.containerd.runsc.v1.options'",
            "  ConfigPath = '/n/etc/containerd/runsc.toml'",
          ],
          [
            `${runtime}]`,
            '  restrict_oom_score_adj = true',
            "  default_runtime_name = 'runc'",
            `${runtime}.containerd.runtimes.runc]`,
            "  runtime_type = 'io.containerd.runc.v2'",
            `${runtime}.containerd.runtimes.runc.options]`,
            '  SystemdCgroup = false',
            '',
          ],
        ],
      },
      [NODE_CONFIG_PATHS.runscConfig]: {
        only: [['[runsc_config]', "  platform = 'systrap'"], []],
      },
      [NODE_CONFIG_PATHS.kubeletConfig]: {
        only: [
          ['cgroupDriver: systemd', 'enforceNodeAllocatable:', '  - pods'],
          [
            'cgroupDriver: cgroupfs',
            'failCgroupV1: false',
            'failSwapOn: false',
            'port: 0',
            'healthzPort: 0',
            'enforceNodeAllocatable: []',
            'cgroupsPerQOS: false',
          ],
        ],
      },
    });
    expect(aws.kubeletArgs).toEqual([
      '--config=/n/etc/podmin/kubelet/config.yaml',
      '--root-dir=/var/lib/kubelet',
    ]);
    expect(local.kubeletArgs).toEqual([...aws.kubeletArgs, '--hostname-override=workers']);
  });
});

describe('renderNodeConfig', () => {
  it('writes the spec node: gVisor by default, the mirrored sandbox, ptp on the /80, the Pods API', () => {
    const files = Object.fromEntries(
      renderNodeConfig('aws', input).files.map((f) => [f.key, f.content]),
    );
    expect(files['containerdConfig']).toBe(
      [
        'version = 3',
        "root = '/n/var/lib/containerd'",
        "state = '/run/containerd'",
        '',
        '[grpc]',
        "  address = '/run/containerd/containerd.sock'",
        '',
        "[plugins.'io.containerd.cri.v1.images'.pinned_images]",
        `  sandbox = '${input.sandboxImage}'`,
        '',
        "[plugins.'io.containerd.cri.v1.images'.registry]",
        "  config_path = '/n/etc/containerd/certs.d'",
        '',
        "[plugins.'io.containerd.cri.v1.runtime'.containerd]",
        "  default_runtime_name = 'runsc'",
        '',
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc]",
        "  runtime_type = 'io.containerd.runsc.v1'",
        '',
        "[plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runsc.options]",
        "  TypeUrl = 'io.containerd.runsc.v1.options'",
        "  ConfigPath = '/n/etc/containerd/runsc.toml'",
        '',
        "[plugins.'io.containerd.cri.v1.runtime'.cni]",
        "  bin_dirs = ['/opt/cni/bin']",
        "  conf_dir = '/n/etc/cni/net.d'",
        '',
      ].join('\n'),
    );
    expect(files['registryHosts']).toBe(
      "server = 'http://127.0.0.1:5000'\n\n[host.'http://127.0.0.1:5000']\n  capabilities = ['pull', 'resolve']\n",
    );
    expect(JSON.parse(files['cniConflist']!)).toEqual({
      cniVersion: '1.0.0',
      name: 'podmin',
      plugins: [
        {
          type: 'ptp',
          ipMasq: false,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: input.podPrefix }]],
            routes: [{ dst: '::/0' }],
            dataDir: '/var/lib/cni/networks',
          },
        },
      ],
    });
    expect(parse(files['kubeletConfig']!)).toEqual({
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      staticPodPath: '/n/etc/podmin/manifests',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
      cgroupDriver: 'systemd',
      address: '::1',
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      authentication: { anonymous: { enabled: false }, webhook: { enabled: false } },
      authorization: { mode: 'AlwaysAllow' },
      clusterDomain: 'cluster.local',
      clusterDNS: [input.nodeAddress],
      resolvConf: '',
      featureGates: { PodsAPI: true },
      kubeReserved: { cpu: '100m', memory: '128Mi' },
      systemReserved: { cpu: '100m', memory: '496Mi' },
      enforceNodeAllocatable: ['pods'],
    });
    expect(parse(files['crictlConfig']!)).toEqual({
      'runtime-endpoint': 'unix:///run/containerd/containerd.sock',
      'image-endpoint': 'unix:///run/containerd/containerd.sock',
      timeout: 10,
    });
    expect(files['corefile']).toBe(
      [
        'svc.cluster.local:53 {',
        `    bind ${input.nodeAddress}`,
        '    forward . 127.0.0.1:1053',
        '    errors',
        '}',
        '.:53 {',
        `    bind ${input.nodeAddress}`,
        '    forward . /etc/resolv.conf',
        '    cache 30',
        '    errors',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('quotes every input alike, so a shell placeholder and its later value are written the same way', () => {
    const placeholders = renderNodeConfig('aws', {
      ...input,
      nodeAddress: '${node_address}',
      systemReserved: { cpu: '${cpu}', memory: '${memory}' },
    });
    const kubelet = placeholders.files.find((f) => f.key === 'kubeletConfig')!.content;
    expect(kubelet).toContain('clusterDNS:\n  - "${node_address}"\n');
    expect(kubelet).toContain('systemReserved:\n  cpu: "${cpu}"\n  memory: "${memory}"\n');
    expect(
      renderNodeConfig('aws', input).files.find((f) => f.key === 'kubeletConfig')!.content,
    ).toContain(`clusterDNS:\n  - "${input.nodeAddress}"\n`);
  });

  it('escapes paths a literal TOML string cannot hold, and keeps paths with spaces whole', () => {
    const config = renderNodeConfig('local', { ...input, root: "/home/o'brien/my nodes/n" });
    const toml = config.files.find((f) => f.key === 'containerdConfig')!.content;
    expect(toml).toContain(`root = "/home/o'brien/my nodes/n/var/lib/containerd"\n`);
    expect(config.kubeletArgs[0]).toBe(
      "--config=/home/o'brien/my nodes/n/etc/podmin/kubelet/config.yaml",
    );
    const kubelet = config.files.find((f) => f.key === 'kubeletConfig')!.content;
    expect(parse(kubelet)).toMatchObject({
      staticPodPath: "/home/o'brien/my nodes/n/etc/podmin/manifests",
    });
  });

  it('names every input it cannot write', () => {
    let caught: unknown;
    try {
      renderNodeConfig('local', {
        ...input,
        root: 'relative',
        nodeAddress: '::1 } evil {',
        podPrefix: 'a\nb',
        upstreamResolvConf: '',
        hostname: undefined,
      });
    } catch (err) {
      caught = err;
    }
    expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect(
      (caught as { problems: Array<{ field: string }> }).problems.map((p) => p.field).sort(),
    ).toEqual(['hostname', 'nodeAddress', 'podPrefix', 'root', 'upstreamResolvConf']);
    // The AWS profile names no host, so none is needed.
    expect(() => renderNodeConfig('aws', { ...input, hostname: undefined })).not.toThrow();
  });
});

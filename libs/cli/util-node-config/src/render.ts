import path from 'node:path';
import { Document, Scalar } from 'yaml';
import { ValidationError, type FieldProblem } from '@podmin/util-errors';
import { NODE_PROFILES, type NodeProfile, type NodeProfileName } from './profiles';

/** The configuration files of a node, by key. */
export type NodeConfigFileKey =
  | 'containerdConfig'
  | 'runscConfig'
  | 'registryHosts'
  | 'cniConflist'
  | 'kubeletConfig'
  | 'crictlConfig'
  | 'corefile';

/**
 * Where each file lives, relative to the node's root (`/` on a VM, the node root locally, so a
 * local node's tree mirrors a VM's).
 */
export const NODE_CONFIG_PATHS: Readonly<Record<NodeConfigFileKey, string>> = Object.freeze({
  containerdConfig: 'etc/containerd/config.toml',
  runscConfig: 'etc/containerd/runsc.toml',
  registryHosts: 'etc/containerd/certs.d/registry.podmin.internal/hosts.toml',
  cniConflist: 'etc/cni/net.d/10-podmin.conflist',
  kubeletConfig: 'etc/podmin/kubelet/config.yaml',
  crictlConfig: 'etc/crictl.yaml',
  corefile: 'etc/coredns/Corefile',
});

/** The spec's kubeReserved share: kubelet and the container runtime. */
export const KUBE_RESERVED = Object.freeze({ cpu: '100m', memory: '128Mi' });

/**
 * Values a node computes for itself. Strings are inserted as given (quoted for their format),
 * so a generator may pass a shell variable such as `${node_address}` that the node's script
 * expands later.
 */
export interface NodeConfigInput {
  /** The node's root: `/` on a VM, the node root locally. Every file and its directories are under it. */
  root: string;
  /** containerd's state directory (its socket lives there). */
  containerdState: string;
  /** containerd's CRI socket, which kubelet and crictl use. */
  containerdSocket: string;
  /** Directory holding the CNI plugins (ptp, host-local, loopback). */
  cniBinDir: string;
  /** kubelet's `--root-dir`. */
  kubeletRootDir: string;
  /** The node's IPv6 address: CoreDNS binds it and every Pod uses it as its DNS server. */
  nodeAddress: string;
  /** The node's /80 Pod prefix, which CNI host-local allocates from. */
  podPrefix: string;
  /** The pinned sandbox (pause) image. */
  sandboxImage: string;
  /** `host:port` of the agent's registry, which registry.podmin.internal resolves to. */
  registryListen: string;
  /** `host:port` of the agent's Service DNS, where CoreDNS forwards svc.cluster.local. */
  serviceDnsListen: string;
  /** The resolv.conf naming the provider's resolvers, where CoreDNS forwards other names. */
  upstreamResolvConf: string;
  /** kubelet systemReserved: the OS share plus the agent's memory budget (DESIGN §6.6). */
  systemReserved: { cpu: string; memory: string };
  /** The node name kubelet uses; required by a profile with `hostnameOverride`. */
  hostname?: string;
}

/** One rendered file. */
export interface NodeConfigFile {
  key: NodeConfigFileKey;
  /** Relative to the node's root ({@link NODE_CONFIG_PATHS}). */
  path: string;
  content: string;
}

/** Everything a node's containerd, CNI, kubelet, crictl and CoreDNS are configured with. */
export interface NodeConfig {
  /** In write order; runsc.toml only for the runsc runtime. */
  files: readonly NodeConfigFile[];
  /** kubelet's command-line arguments (after the program). */
  kubeletArgs: readonly string[];
}

/**
 * Renders the node configuration for a profile (`aws`, `local`, or a {@link NodeProfile}).
 * Pure: the same profile and input give the same bytes. ValidationError names every input
 * that cannot be written into its file.
 */
export function renderNodeConfig(
  profile: NodeProfileName | NodeProfile,
  input: NodeConfigInput,
): NodeConfig {
  const p = typeof profile === 'string' ? NODE_PROFILES[profile] : profile;
  checkInput(p, input);
  const files: NodeConfigFile[] = [];
  const add = (key: NodeConfigFileKey, content: string) =>
    files.push({ key, path: NODE_CONFIG_PATHS[key], content });
  add('containerdConfig', renderContainerdConfig(p, input));
  if (p.runtime === 'runsc') add('runscConfig', renderRunscConfig());
  add('registryHosts', renderRegistryHosts(input));
  add('cniConflist', renderCniConflist(input));
  add('kubeletConfig', renderKubeletConfig(p, input));
  add('crictlConfig', renderCrictlConfig(input));
  add('corefile', renderCorefile(input));
  return { files, kubeletArgs: renderKubeletArgs(p, input) };
}

const under = (input: NodeConfigInput, relative: string): string =>
  path.posix.join(input.root, relative);

// No TOML library in the workspace, and these files have a fixed shape: a literal string
// unless the value holds a quote or control character, then a basic string with escapes.
function tomlString(value: string): string {
  if (!value.includes("'") && !hasControl(value)) return `'${value}'`;
  return JSON.stringify(value);
}

/** Whether a value holds a C0 control character or DEL (a line break among them). */
function hasControl(value: string): boolean {
  return [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
}

/** containerd's config.toml (schema version 3, containerd 2.x). */
export function renderContainerdConfig(profile: NodeProfile, input: NodeConfigInput): string {
  const cri = "plugins.'io.containerd.cri.v1";
  const runtimes = `${cri}.runtime'.containerd.runtimes.${profile.runtime}`;
  const sections: string[][] = [
    [
      'version = 3',
      `root = ${tomlString(under(input, 'var/lib/containerd'))}`,
      `state = ${tomlString(input.containerdState)}`,
    ],
    ['[grpc]', `  address = ${tomlString(input.containerdSocket)}`],
    [`[${cri}.images'.pinned_images]`, `  sandbox = ${tomlString(input.sandboxImage)}`],
    [
      `[${cri}.images'.registry]`,
      `  config_path = ${tomlString(under(input, 'etc/containerd/certs.d'))}`,
    ],
  ];
  if (profile.restrictOomScoreAdj) {
    sections.push([`[${cri}.runtime']`, '  restrict_oom_score_adj = true']);
  }
  sections.push([
    `[${cri}.runtime'.containerd]`,
    `  default_runtime_name = ${tomlString(profile.runtime)}`,
  ]);
  if (profile.runtime === 'runsc') {
    sections.push(
      [`[${runtimes}]`, "  runtime_type = 'io.containerd.runsc.v1'"],
      [
        `[${runtimes}.options]`,
        "  TypeUrl = 'io.containerd.runsc.v1.options'",
        `  ConfigPath = ${tomlString(under(input, NODE_CONFIG_PATHS.runscConfig))}`,
      ],
    );
  } else {
    sections.push(
      [`[${runtimes}]`, "  runtime_type = 'io.containerd.runc.v2'"],
      [`[${runtimes}.options]`, `  SystemdCgroup = ${profile.cgroupDriver === 'systemd'}`],
    );
  }
  sections.push([
    `[${cri}.runtime'.cni]`,
    `  bin_dirs = [${tomlString(input.cniBinDir)}]`,
    `  conf_dir = ${tomlString(under(input, 'etc/cni/net.d'))}`,
  ]);
  return `${sections.map((s) => s.join('\n')).join('\n\n')}\n`;
}

/** gVisor's runtime options (containerd's runsc runtime reads them through ConfigPath). */
export function renderRunscConfig(): string {
  return "[runsc_config]\n  platform = 'systrap'\n";
}

/** The hosts.toml mapping registry.podmin.internal to the agent's plain-HTTP registry. */
export function renderRegistryHosts(input: Pick<NodeConfigInput, 'registryListen'>): string {
  const server = tomlString(`http://${input.registryListen}`);
  return `server = ${server}\n\n[host.${server}]\n  capabilities = ['pull', 'resolve']\n`;
}

/**
 * The CNI network: ptp + host-local on the node's /80, no masquerade. No loopback entry:
 * containerd's CRI brings up each sandbox's `lo` with its own loopback network.
 */
export function renderCniConflist(input: Pick<NodeConfigInput, 'podPrefix'>): string {
  const conflist = {
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
  };
  return `${JSON.stringify(conflist, null, 2)}\n`;
}

// Every value from the input is double-quoted whatever it holds, so a placeholder and the value
// that replaces it later are quoted alike.
function quoted(value: string): Scalar {
  const scalar = new Scalar(value);
  scalar.type = Scalar.QUOTE_DOUBLE;
  return scalar;
}

function yamlText(value: unknown): string {
  return new Document(value).toString({ lineWidth: 0 });
}

/** kubelet's KubeletConfiguration: standalone, static Pods only, the Pods API enabled. */
export function renderKubeletConfig(profile: NodeProfile, input: NodeConfigInput): string {
  const config: Record<string, unknown> = {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    staticPodPath: quoted(under(input, 'etc/podmin/manifests')),
    containerRuntimeEndpoint: quoted(`unix://${input.containerdSocket}`),
    cgroupDriver: profile.cgroupDriver,
  };
  if (profile.allowCgroupV1) config['failCgroupV1'] = false;
  if (profile.allowSwap) config['failSwapOn'] = false;
  config['address'] = quoted('::1');
  if (profile.kubeletPortsOff) config['port'] = 0;
  config['readOnlyPort'] = 0;
  config['healthzBindAddress'] = '127.0.0.1';
  if (profile.kubeletPortsOff) config['healthzPort'] = 0;
  Object.assign(config, {
    authentication: { anonymous: { enabled: false }, webhook: { enabled: false } },
    authorization: { mode: 'AlwaysAllow' },
    clusterDomain: 'cluster.local',
    clusterDNS: [quoted(input.nodeAddress)],
    // Pods search exactly the spec's cluster domains: nothing from the host's resolv.conf.
    resolvConf: quoted(''),
    featureGates: { PodsAPI: true },
    kubeReserved: { cpu: quoted(KUBE_RESERVED.cpu), memory: quoted(KUBE_RESERVED.memory) },
    systemReserved: {
      cpu: quoted(input.systemReserved.cpu),
      memory: quoted(input.systemReserved.memory),
    },
  });
  if (profile.enforceNodeAllocatable) {
    config['enforceNodeAllocatable'] = ['pods'];
  } else {
    config['enforceNodeAllocatable'] = [];
    config['cgroupsPerQOS'] = false;
  }
  return yamlText(config);
}

/** kubelet's arguments: the config file, the root directory and, if the profile says, a node name. */
export function renderKubeletArgs(profile: NodeProfile, input: NodeConfigInput): string[] {
  const args = [
    `--config=${under(input, NODE_CONFIG_PATHS.kubeletConfig)}`,
    `--root-dir=${input.kubeletRootDir}`,
  ];
  if (profile.hostnameOverride) args.push(`--hostname-override=${input.hostname ?? ''}`);
  return args;
}

/** /etc/crictl.yaml: both CRI services at containerd's socket. */
export function renderCrictlConfig(input: Pick<NodeConfigInput, 'containerdSocket'>): string {
  const endpoint = quoted(`unix://${input.containerdSocket}`);
  return yamlText({ 'runtime-endpoint': endpoint, 'image-endpoint': endpoint, timeout: 10 });
}

/**
 * The spec's Corefile: svc.cluster.local to the agent's authoritative DNS, everything else to
 * the provider's resolvers, both bound to the node address only.
 */
export function renderCorefile(
  input: Pick<NodeConfigInput, 'nodeAddress' | 'serviceDnsListen' | 'upstreamResolvConf'>,
): string {
  return [
    'svc.cluster.local:53 {',
    `    bind ${input.nodeAddress}`,
    `    forward . ${input.serviceDnsListen}`,
    '    errors',
    '}',
    '.:53 {',
    `    bind ${input.nodeAddress}`,
    `    forward . ${input.upstreamResolvConf}`,
    '    cache 30',
    '    errors',
    '}',
    '',
  ].join('\n');
}

// A Corefile token: no whitespace, quotes, comment or block characters other than a shell
// variable's braces (`${name}`), which the node's script replaces before CoreDNS reads it.
const COREFILE_TOKEN = /^(?:[^\s"'`#;{}\\]|\$\{[a-z_]+\})+$/;

function checkInput(profile: NodeProfile, input: NodeConfigInput): void {
  const problems: FieldProblem[] = [];
  const strings: Array<[string, string | undefined]> = [
    ['root', input.root],
    ['containerdState', input.containerdState],
    ['containerdSocket', input.containerdSocket],
    ['cniBinDir', input.cniBinDir],
    ['kubeletRootDir', input.kubeletRootDir],
    ['nodeAddress', input.nodeAddress],
    ['podPrefix', input.podPrefix],
    ['sandboxImage', input.sandboxImage],
    ['registryListen', input.registryListen],
    ['serviceDnsListen', input.serviceDnsListen],
    ['upstreamResolvConf', input.upstreamResolvConf],
    ['systemReserved.cpu', input.systemReserved.cpu],
    ['systemReserved.memory', input.systemReserved.memory],
  ];
  for (const [field, value] of strings) {
    if (value === undefined || value === '' || hasControl(value)) {
      problems.push({ field, message: 'must be a non-empty single line' });
    }
  }
  if (!input.root.startsWith('/')) {
    problems.push({ field: 'root', message: `${JSON.stringify(input.root)} is not absolute` });
  }
  for (const field of ['nodeAddress', 'serviceDnsListen', 'upstreamResolvConf'] as const) {
    if (input[field] !== '' && !COREFILE_TOKEN.test(input[field])) {
      problems.push({
        field,
        message: `${JSON.stringify(input[field])} cannot be a Corefile word: no whitespace, quotes, braces, '#', ';' or '\\'`,
      });
    }
  }
  if (
    profile.hostnameOverride &&
    !/^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$/.test(input.hostname ?? '')
  ) {
    problems.push({
      field: 'hostname',
      message: `${JSON.stringify(input.hostname ?? '')} is not a lowercase host name; the profile overrides the node name`,
    });
  }
  if (problems.length > 0) {
    throw new ValidationError('rendering the node configuration', problems, {
      code: 'INVALID_ARGUMENT',
    });
  }
}

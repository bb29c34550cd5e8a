import { containerLogAttributes, KUBELET_LOG_NAME_PATTERN } from './kubelet-log-name';

// kubelet's /var/log/containers symlinks as it names them (pkg/kubelet/kuberuntime:
// BuildContainerLogsDirectory / logSymlink: <pod>_<namespace>_<container>-<container id>.log),
// for Pods as podmin runs them: static Pods named <name>-<node name> (node names with dots),
// Deployment-style names with hash suffixes, the platform-cloudflared namespace, containers
// with dashes, and containerd's 64-hex IDs.
const GOLDEN: Array<[string, Record<string, string>]> = [
  // Two names a real kubelet 1.36 wrote on a local podmin node (the demo and the node tier's
  // cloudflared install), as `ls /var/log/containers` showed them.
  [
    '/var/log/containers/client-default_default_client-dd4192f86de891f69e4fa7806fcdda6b71230c9fe84882f58db657ef1d75a31f.log',
    {
      'k8s.pod.name': 'client-default',
      'k8s.namespace.name': 'default',
      'k8s.container.name': 'client',
      'container.id': 'dd4192f86de891f69e4fa7806fcdda6b71230c9fe84882f58db657ef1d75a31f',
    },
  ],
  [
    '/var/log/containers/cloudflared-default_platform-cloudflared_cloudflared-250ed1f000c4ffa8effbee9c0c0c8f23e2ed8c1b2ee6596844b2a852067994a3.log',
    {
      'k8s.pod.name': 'cloudflared-default',
      'k8s.namespace.name': 'platform-cloudflared',
      'k8s.container.name': 'cloudflared',
      'container.id': '250ed1f000c4ffa8effbee9c0c0c8f23e2ed8c1b2ee6596844b2a852067994a3',
    },
  ],
  [
    '/var/log/containers/cloudflared-ip-10-0-1-23.eu-west-1.compute.internal_platform-cloudflared_cloudflared-6f1d2c3b4a5968778695a4b3c2d1e0f000112233445566778899aabbccddeeff.log',
    {
      'k8s.pod.name': 'cloudflared-ip-10-0-1-23.eu-west-1.compute.internal',
      'k8s.namespace.name': 'platform-cloudflared',
      'k8s.container.name': 'cloudflared',
      'container.id': '6f1d2c3b4a5968778695a4b3c2d1e0f000112233445566778899aabbccddeeff',
    },
  ],
  [
    '/var/log/containers/web-i-0b007e570000b0075_default_web-0d4f9a1c87b3e2a65f0c1d9e8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b.log',
    {
      'k8s.pod.name': 'web-i-0b007e570000b0075',
      'k8s.namespace.name': 'default',
      'k8s.container.name': 'web',
      'container.id': '0d4f9a1c87b3e2a65f0c1d9e8b7a6c5d4e3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b',
    },
  ],
  [
    '/var/log/containers/coredns-7db6d8ff4d-4xk2b_kube-system_coredns-a3c5e7f9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5.log',
    {
      'k8s.pod.name': 'coredns-7db6d8ff4d-4xk2b',
      'k8s.namespace.name': 'kube-system',
      'k8s.container.name': 'coredns',
      'container.id': 'a3c5e7f9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a5',
    },
  ],
  [
    // A container name with dashes and digits, in a namespace ending in a digit.
    '/var/log/containers/api.v2-node-1_product-2_istio-proxy-init-2-ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff.log',
    {
      'k8s.pod.name': 'api.v2-node-1',
      'k8s.namespace.name': 'product-2',
      'k8s.container.name': 'istio-proxy-init-2',
      'container.id': 'ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff',
    },
  ],
];

describe('the kubelet log name → attributes mapping (golden)', () => {
  it.each(GOLDEN)('%s', (file, attributes) => {
    expect(containerLogAttributes(file)).toEqual(attributes);
  });

  it.each([
    ['a rotated or compressed file', GOLDEN[0]?.[0].replace(/\.log$/, '.log.20260101-000000.gz')],
    ['a container ID one digit short', GOLDEN[1]?.[0].replace(/[0-9a-f](\.log)$/, '$1')],
    ['an upper-case Pod name', GOLDEN[3]?.[0].replace('/web-i-', '/Web-i-')],
    ['a file outside /var/log/containers', GOLDEN[1]?.[0].replace('/containers/', '/pods/')],
    ['a name without a namespace', '/var/log/containers/web_web-' + 'a'.repeat(64) + '.log'],
    ['a namespace with a dot', '/var/log/containers/web_a.b_web-' + 'a'.repeat(64) + '.log'],
  ])('refuses %s', (_what, file) => {
    expect(containerLogAttributes(file ?? '')).toBeUndefined();
  });

  it('is one pattern Onigmo and JavaScript read alike: named groups without dots', () => {
    const names = [...KUBELET_LOG_NAME_PATTERN.matchAll(/\(\?<([^>]+)>/g)].map((m) => m[1]);
    expect(names).toEqual(['pod', 'namespace', 'container', 'container_id']);
    // No lookbehind, backreference or JavaScript-only escape.
    expect(KUBELET_LOG_NAME_PATTERN).not.toMatch(/\(\?<[=!]|\\k<|\\[pPu]/);
  });
});

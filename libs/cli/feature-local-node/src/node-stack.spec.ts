import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { renderNodeConfig } from '@podmin/cli-util-node-config';
import { localNodeAddress, localNodeLayout, localPodPrefix } from './node-layout';
import {
  SANDBOX_IMAGE,
  localNodeConfig,
  nodeStackPaths,
  writeNodeConfig,
  type NodeStackOptions,
} from './node-stack-config';

describe('the local node configuration', () => {
  let dataDir: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'podmin-node-config-'));
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it('writes the local rendering byte for byte where the node stack reads it', async () => {
    const layout = localNodeLayout(dataDir, 'demo', 'workers');
    const options: NodeStackOptions = {
      layout,
      binaries: {
        kubelet: '/stack/bin/kubelet',
        containerd: '/stack/bin/containerd',
        shimDir: '/stack/bin',
        cniDir: '/stack/cni',
        crictl: '/stack/bin/crictl',
        coredns: '/stack/bin/coredns',
      },
      registryListen: '127.0.0.1:5001',
      dnsListen: '127.0.0.1:1054',
      podPrefix: localPodPrefix('demo', 'workers'),
      nodeAddress: localNodeAddress('demo', 'workers'),
      systemReservedMemory: '496Mi',
    };
    const p = nodeStackPaths(layout);
    const config = localNodeConfig(options);
    expect(config).toEqual(
      renderNodeConfig('local', {
        root: layout.root,
        containerdState: p.containerdState,
        containerdSocket: p.socket,
        cniBinDir: '/stack/cni',
        kubeletRootDir: p.kubeletRoot,
        nodeAddress: options.nodeAddress,
        podPrefix: options.podPrefix,
        sandboxImage: SANDBOX_IMAGE,
        registryListen: '127.0.0.1:5001',
        serviceDnsListen: '127.0.0.1:1054',
        upstreamResolvConf: '/etc/resolv.conf',
        systemReserved: { cpu: '100m', memory: '496Mi' },
        hostname: 'workers',
      }),
    );

    await writeNodeConfig(layout.root, config);
    const written = (await readdir(layout.root, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => path.relative(layout.root, path.join(e.parentPath, e.name)))
      .sort();
    expect(written).toEqual(config.files.map((f) => f.path).sort());
    for (const file of config.files) {
      expect({
        file: file.path,
        content: readFileSync(path.join(layout.root, file.path), 'utf8'),
      }).toEqual({ file: file.path, content: file.content });
    }
    // The paths the node stack hands containerd, CoreDNS and kubelet are those files.
    const content = (key: string) => config.files.find((f) => f.key === key)?.content;
    expect(readFileSync(p.containerdConfig, 'utf8')).toBe(content('containerdConfig'));
    expect(readFileSync(p.corefile, 'utf8')).toBe(content('corefile'));
    expect(readFileSync(p.crictlConfig, 'utf8')).toBe(content('crictlConfig'));
    expect(config.kubeletArgs).toEqual([
      `--config=${p.kubeletConfig}`,
      `--root-dir=${p.kubeletRoot}`,
      '--hostname-override=workers',
    ]);
    expect(readFileSync(p.kubeletConfig, 'utf8')).toBe(content('kubeletConfig'));
    expect(content('containerdConfig')).toContain(`  bin_dirs = ['/stack/cni']\n`);
    expect(content('registryHosts')).toContain(`server = 'http://127.0.0.1:5001'\n`);
  });
});

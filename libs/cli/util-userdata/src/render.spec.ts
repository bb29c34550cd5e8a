import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { dependencyManifest, makeTempDir } from '@podmin/testing';
import {
  FILE_DEPENDENCIES,
  canonicalFileName,
  dependencyObjectKey,
  type Arch,
} from '@podmin/util-dependencies';
import { renderNodeConfig } from '@podmin/cli-util-node-config';
import { AWS_USERDATA_TEMPLATE } from './generated/aws-template';
import { awsNodeConfigInput, withAwsNodeConfigBlock } from './node-config';
import {
  gzipUserData,
  renderAwsUserData,
  renderAwsUserDataGzip,
  stripShellComments,
  type AwsUserDataInput,
} from './render';

const REPO = path.resolve(__dirname, '../../../..');

const manifest = () => dependencyManifest({ versions: { kubelet: '1.36.2' } });

const input = (arch: Arch, overrides: Partial<AwsUserDataInput> = {}): AwsUserDataInput => ({
  arch,
  cluster: 'prod',
  nodegroup: 'workers',
  bucket: 'podmin-prod-bucket',
  region: 'eu-west-1',
  manifest: manifest(),
  ...overrides,
});

function problemFields(run: () => unknown): string[] {
  try {
    run();
  } catch (err) {
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENT' });
    return (err as { problems: Array<{ field: string }> }).problems.map((p) => p.field);
  }
  throw new Error('expected a ValidationError');
}

describe('renderAwsUserData', () => {
  it('embeds exactly userdata/aws.sh', () => {
    expect(AWS_USERDATA_TEMPLATE).toBe(readFileSync(path.join(REPO, 'userdata/aws.sh'), 'utf8'));
  });

  it.each(['amd64', 'arm64'] as const)(
    'renders %s with its rows and the critical configuration',
    async (arch) => {
      const script = renderAwsUserData(input(arch));
      const other = arch === 'amd64' ? 'arm64' : 'amd64';
      FILE_DEPENDENCIES.forEach((dep, i) => {
        const version = dep.name === 'kubelet' ? '1.36.2' : `1.${i}.0`;
        expect(script).toContain(
          `  '${canonicalFileName(dep)}|${dependencyObjectKey(dep, version, arch)}|sha512:${String(i).repeat(128)}'`,
        );
      });
      expect(script).toContain(
        `  'kubelet|dependencies/kubelet/kubelet-v1.36.2-linux-${arch}|sha512:${'3'.repeat(128)}'`,
      );
      expect(script).not.toContain(`-linux-${other}`);
      expect(script).toContain(`arch='${arch}'`);
      expect(script).toContain(
        `pause_image='registry.podmin.internal/mirror/registry.k8s.io/pause@sha256:${'3'.repeat(64)}'`,
      );
      for (const fragment of [
        "default_runtime_name = 'runsc'",
        "runtime_type = 'io.containerd.runsc.v1'",
        "--exclude 'bin/containerd-shim-runc-v2'",
        'staticPodPath: "/etc/podmin/manifests"',
        'PodsAPI: true',
        'kubeReserved:\n  cpu: "100m"\n  memory: "128Mi"',
        'systemReserved:\n  cpu: "${system_reserved_cpu}"\n  memory: "${system_reserved_memory}"',
        "system_reserved_cpu='100m'",
        "system_reserved_memory='496Mi'",
        'runtime-endpoint: "unix:///run/containerd/containerd.sock"',
        'bind ${node_address}',
        'forward . 127.0.0.1:1053',
        '--provider aws --bucket ${bucket} --region ${region} --cluster ${cluster} --nodegroup ${nodegroup} --ipv6-prefix \\${POD_PREFIX}',
        'After=run-podmin.mount containerd.service podmin-pod-network.service\n',
        'After=network-online.target run-podmin.mount podmin-pod-network.service kubelet.service\n',
        'KillMode=mixed\n',
        '--ipv6-prefix-count 1',
        'https://s3.dualstack.${region}.amazonaws.com',
        'amazon-ssm-${region}/latest/debian_${arch}/amazon-ssm-agent.deb',
        'X-aws-ec2-metadata-token-ttl-seconds',
        'net.ipv6.conf.all.forwarding = 1',
        'Where=/run/podmin',
        'if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then',
      ]) {
        expect(script).toContain(fragment);
      }
      // Comments and blank lines are gone (the shebang stays); here-documents are untouched.
      const lines = script.split('\n');
      expect(lines[0]).toBe('#!/usr/bin/env bash');
      expect(lines.slice(1).filter((l) => l.trim().startsWith('#'))).toEqual([]);
      expect(script).toContain(
        '[Unit]\nDescription=containerd (gVisor runtime by default)\nAfter=network.target local-fs.target\n\n[Service]',
      );

      const dir = await makeTempDir('podmin-userdata');
      try {
        const file = path.join(dir.path, `aws-${arch}.sh`);
        writeFileSync(file, script);
        execFileSync('bash', ['-n', file]);
        execFileSync('shellcheck', ['--severity=style', file]);
      } finally {
        await dir.cleanup();
      }
    },
  );

  it('hands --workload-ca-publish to the script, and nothing without it', () => {
    const url = 's3://example-trust/podmin/(demo)_ca-1.pem';
    expect(renderAwsUserData(input('arm64', { workloadCaPublish: url }))).toContain(
      `workload_ca_publish='${url}'`,
    );
    const without = renderAwsUserData(input('arm64'));
    expect(without).toContain("workload_ca_publish=''");
    // The script writes it into node.env, the agent unit's EnvironmentFile.
    expect(without).toContain('publish_env="PODMIN_WORKLOAD_CA_PUBLISH=${workload_ca_publish}"');
    expect(without).toContain('EnvironmentFile=/etc/podmin/node.env');
  });

  it.each([
    'https://example-trust/ca.pem',
    's3://example-trust/ca/*.pem',
    "s3://example-trust/ca'$(reboot)'.pem",
    's3://example-trust/a b.pem',
    's3://example-trust/ca/../x.pem',
  ])('refuses the malformed --workload-ca-publish %s', (url) => {
    expect(
      problemFields(() => renderAwsUserData(input('amd64', { workloadCaPublish: url }))),
    ).toEqual(['workloadCaPublish']);
  });

  it('honours a measured systemReserved budget', () => {
    const script = renderAwsUserData(
      input('arm64', { systemReserved: { cpu: '150m', memory: '480Mi' } }),
    );
    expect(script).toContain("system_reserved_cpu='150m'");
    expect(script).toContain("system_reserved_memory='480Mi'");
  });

  it('requires the complete canonical set and validates every value', () => {
    const incomplete = manifest();
    delete incomplete.dependencies['coredns'];
    delete incomplete.dependencies['gvisor']!.arm64;
    incomplete.dependencies['kubelet']!.arm64!.path =
      'dependencies/kubelet/kubelet-v1.36.2-linux-amd64';
    delete (incomplete.images as Record<string, unknown>)['pause'];
    expect(
      problemFields(() =>
        renderAwsUserData(
          input('arm64', {
            manifest: incomplete,
            cluster: 'Prod',
            nodegroup: "w'; rm -rf /",
            bucket: '192.168.0.1',
            region: 'moon-1',
            systemReserved: { cpu: '0.1', memory: '96M' },
          }),
        ),
      ).sort(),
    ).toEqual(
      [
        'bucket',
        'cluster',
        'manifest.dependencies.coredns.arm64',
        'manifest.dependencies.gvisor.arm64',
        'manifest.dependencies.kubelet.arm64.path',
        'manifest.images.pause',
        'nodegroup',
        'region',
        'systemReserved.cpu',
        'systemReserved.memory',
      ].sort(),
    );
  });
});

describe('deterministic gzip', () => {
  it('renders the same bytes for the same inputs, mtime 0 and a fixed OS byte', () => {
    const a = renderAwsUserDataGzip(input('amd64'));
    const b = renderAwsUserDataGzip(input('amd64'));
    expect(a.equals(b)).toBe(true);
    expect(a.readUInt32LE(4)).toBe(0);
    expect(a[9]).toBe(3);
    expect(gunzipSync(a).toString()).toBe(renderAwsUserData(input('amd64')));
    expect(a.equals(renderAwsUserDataGzip(input('arm64')))).toBe(false);
    expect(gzipUserData('x').equals(gzipUserData('x'))).toBe(true);
  });
});

describe('stripShellComments', () => {
  it('keeps here-document bodies and here-strings intact', () => {
    const script = [
      '#!/bin/bash',
      '# comment',
      '',
      'read -r x <<<"$y"',
      'cat <<EOF',
      '# kept: inside a here-document',
      '',
      'EOF',
      '  # indented comment',
      'echo done',
    ].join('\n');
    expect(stripShellComments(script)).toBe(
      [
        '#!/bin/bash',
        'read -r x <<<"$y"',
        'cat <<EOF',
        '# kept: inside a here-document',
        '',
        'EOF',
        'echo done',
        '',
      ].join('\n'),
    );
  });
});

describe('the node configuration in user-data', () => {
  it('is the generated block of aws.sh, rendered by @podmin/cli-util-node-config', () => {
    const script = readFileSync(path.join(REPO, 'userdata/aws.sh'), 'utf8');
    expect(withAwsNodeConfigBlock(script)).toBe(script);
    expect(() => withAwsNodeConfigBlock(script.replace('# @podmin:node-config-end', ''))).toThrow(
      /exactly one/,
    );
  });

  it('writes the aws rendering byte for byte once bash has put in the VM boot values', async () => {
    const dir = await makeTempDir('podmin-userdata-node-config');
    try {
      const script = path.join(dir.path, 'user-data.sh');
      writeFileSync(script, renderAwsUserData(input('arm64')));
      const root = path.join(dir.path, 'root');
      const boot = {
        nodeAddress: '2600:1f14:aaaa:bb01::10',
        podPrefix: '2600:1f14:aaaa:bb01:1234::/80',
        upstreamResolvConf: '/run/systemd/resolve/resolv.conf',
      };
      // The rendered script's own values (pause image, systemReserved) come from its render
      // block; what IMDS and EC2 would tell it is set here.
      execFileSync(
        'bash',
        [
          '-c',
          [
            'source "$1"',
            `node_address='${boot.nodeAddress}' pod_prefix='${boot.podPrefix}'`,
            `resolv_conf='${boot.upstreamResolvConf}'`,
            'write_node_config',
            'write_units',
          ].join('\n'),
          'user-data',
          script,
        ],
        { env: { PATH: process.env['PATH'], PODMIN_TEST_ROOT: root } },
      );
      const expected = renderNodeConfig(
        'aws',
        awsNodeConfigInput({
          ...boot,
          sandboxImage: `registry.podmin.internal/mirror/registry.k8s.io/pause@sha256:${'3'.repeat(64)}`,
          systemReservedCpu: '100m',
          systemReservedMemory: '496Mi',
        }),
      );
      for (const file of expected.files) {
        expect({
          file: file.path,
          content: readFileSync(path.join(root, file.path), 'utf8'),
        }).toEqual({ file: file.path, content: file.content });
      }
      // Nothing else under etc/ but the units and the files the renderer named.
      const written = (dir: string): string[] =>
        readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
          .filter((f) => !f.startsWith('etc/systemd/'));
      expect(written('etc').sort()).toEqual(expected.files.map((f) => f.path).sort());
      const kubeletUnit = readFileSync(
        path.join(root, 'etc/systemd/system/kubelet.service'),
        'utf8',
      );
      expect(kubeletUnit).toContain(
        `\nExecStart=/usr/local/bin/kubelet ${expected.kubeletArgs.join(' ')}\n`,
      );
    } finally {
      await dir.cleanup();
    }
  });
});

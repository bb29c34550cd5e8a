import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createS3Client, S3ObjectStore } from '@podmin/data-access-object-store';
import { createSsmClient, ParameterStoreSecretStore } from '@podmin/data-access-secrets';
import {
  commitDesiredState,
  freeLoopbackPort,
  waitFor,
  getAwsEmulator,
  uniqueBucketName,
} from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';
import {
  createClusterCa,
  generateWorkloadCaSecretValue,
  serializeClusterCaSecret,
} from '@podmin/util-pki';

const BIN = path.resolve(__dirname, '../../../dist/bin/podmin-agent.cjs');

describe('podmin-agent --provider aws against the S3 and SSM emulator', () => {
  it('reads the index from S3, secrets and CAs from Parameter Store, and publishes the workload CA bundle', async () => {
    const emulator = await getAwsEmulator();
    const bucket = uniqueBucketName('podmin-agent');
    const creds = {
      region: emulator.region,
      endpoint: emulator.endpoint,
      credentials: emulator.credentials,
    };
    const s3 = createS3Client(creds);
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const trustBucket = uniqueBucketName('podmin-trust');
    await s3.send(new CreateBucketCommand({ Bucket: trustBucket }));
    const secrets = new ParameterStoreSecretStore(createSsmClient(creds));
    const cluster = `c${Date.now().toString(36)}`;
    await secrets.create(
      `/${cluster}/_system/workload-ca-key`,
      Buffer.from(generateWorkloadCaSecretValue()),
    );
    await secrets.create(
      `/${cluster}/_system/cluster-ca`,
      Buffer.from(serializeClusterCaSecret(await createClusterCa(cluster, new Date()))),
    );
    await secrets.create(`/${cluster}/default/api/token`, Buffer.from('s3cr3t'));

    const objects = new S3ObjectStore({ client: s3, bucket });
    const d = buildDeployment(
      `apiVersion: apps/v1
kind: DaemonSet
metadata: { name: api }
spec:
  selector: { matchLabels: { app: api } }
  template:
    metadata: { labels: { app: api }, annotations: { podmin.dev/aws-parameter-store: token } }
    spec:
      nodeSelector: { podmin.dev/nodegroup: workers }
      containers: [{ name: api, image: api:v1 }]
`,
      { source: 'test' },
    );
    await commitDesiredState(objects, { deploy: [d] });

    const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-aws-node-'));
    const [health, registry, dns, coordination] = await Promise.all([
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
      freeLoopbackPort(),
    ]);
    const child = spawn(
      process.execPath,
      [
        BIN,
        '--provider',
        'aws',
        '--bucket',
        bucket,
        '--region',
        emulator.region,
        '--cluster',
        cluster,
        '--nodegroup',
        'workers',
        '--ipv6-prefix',
        '2600:1f14:abc:1200:1::/80',
      ],
      {
        env: {
          PATH: process.env['PATH'] ?? '',
          PODMIN_NODE_ROOT: nodeRoot,
          // The coordinator binds the node address: here loopback, on ports of this test's own.
          PODMIN_NODE_ADDRESS: '::1',
          PODMIN_NODE_ID: 'node-aws',
          PODMIN_AGENT_HEALTH_ADDRESS: `127.0.0.1:${health}`,
          PODMIN_AGENT_REGISTRY_LISTEN: `127.0.0.1:${registry}`,
          PODMIN_AGENT_DNS_LISTEN: `127.0.0.1:${dns}`,
          PODMIN_AGENT_COORDINATION_PORT: String(coordination),
          PODMIN_WORKLOAD_CA_PUBLISH: `s3://${trustBucket}/trust/workload-ca.pem`,
          AWS_ENDPOINT_URL: emulator.endpoint,
          AWS_ENDPOINT_URL_S3: emulator.endpoint,
          AWS_ACCESS_KEY_ID: emulator.credentials.accessKeyId,
          AWS_SECRET_ACCESS_KEY: emulator.credentials.secretAccessKey,
          AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    const exited = new Promise<number>((resolve) =>
      child.on('close', (code) => resolve(code ?? -1)),
    );
    try {
      const manifest = path.join(nodeRoot, 'etc/podmin/manifests/api.yaml');
      const deadline = Date.now() + 30_000;
      while (!fs.existsSync(manifest)) {
        if (Date.now() > deadline)
          throw new Error(
            `no static Pod within 30 s; agent log:\n${output.split('\n').slice(-20).join('\n')}`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
      const text = fs.readFileSync(manifest, 'utf8');
      expect(text).toContain('nameservers:\n      - ::1');
      const secretDir = /path: (\S+aws-parameter-store)/.exec(text)?.[1] as string;
      expect(fs.readFileSync(path.join(secretDir, 'token'), 'utf8')).toBe('s3cr3t');
      // The leader created identity/ca.json in the bucket and published the bundle externally.
      const caState = JSON.parse((await objects.get('identity/ca.json')).body.toString()) as {
        certificates: Array<{ pem: string }>;
      };
      const trust = new S3ObjectStore({ client: s3, bucket: trustBucket });
      let external = '';
      for (const until = Date.now() + 15_000; Date.now() < until && external === '';) {
        external = await trust.get('trust/workload-ca.pem').then(
          (o) => o.body.toString(),
          () => '',
        );
        if (external === '') await new Promise((r) => setTimeout(r, 200));
      }
      if (external === '')
        throw new Error(
          `no external bundle; agent log:\n${output
            .split('\n')
            .filter((l) => l.includes('identity'))
            .slice(-15)
            .join('\n')}`,
        );
      expect(external).toBe(caState.certificates.map((c) => c.pem).join(''));
      // Every service converges to healthy (agent-dns once the lone leader's first snapshot
      // reaches it); a process that stays unhealthy fails here, naming itself.
      let body = '';
      const healthy = await waitFor(
        async () => {
          const res = await fetch(`http://127.0.0.1:${health}/healthz`);
          body = await res.text();
          return res.status === 200 ? true : undefined;
        },
        'every agent service to be healthy',
        20_000,
      ).catch(() => false);
      expect({ healthy, body }).toMatchObject({ healthy: true });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      fs.rmSync(nodeRoot, { recursive: true, force: true });
    }
  });
});

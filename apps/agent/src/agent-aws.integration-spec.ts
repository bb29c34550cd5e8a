import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { createS3Client, S3ObjectStore } from '@podmin/data-access-object-store';
import { createSsmClient, ParameterStoreSecretStore } from '@podmin/data-access-secrets';
import {
  awsAgentArgs,
  commitDesiredState,
  emulatorAgentEnv,
  freeAgentPorts,
  getAwsEmulator,
  seedClusterSecrets,
  spawnBuiltAgent,
  uniqueBucketName,
  waitFor,
} from '@podmin/testing';
import { buildDeployment } from '@podmin/util-manifest';

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
    await seedClusterSecrets(secrets, cluster, { [`/${cluster}/default/api/token`]: 's3cr3t' });

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
    const ports = await freeAgentPorts();
    const health = ports.health;
    const agent = spawnBuiltAgent({
      args: awsAgentArgs(bucket, emulator.region, cluster, 'workers'),
      nodeRoot,
      ports,
      nodeId: 'node-aws',
      env: {
        PODMIN_WORKLOAD_CA_PUBLISH: `s3://${trustBucket}/trust/workload-ca.pem`,
        ...emulatorAgentEnv(emulator),
      },
    });
    const { child, exited } = agent;
    try {
      const manifest = path.join(nodeRoot, 'etc/podmin/manifests/api.yaml');
      const deadline = Date.now() + 30_000;
      while (!fs.existsSync(manifest)) {
        if (Date.now() > deadline)
          throw new Error(`no static Pod within 30 s; agent log:\n${agent.tail(20)}`);
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
          `no external bundle; agent log:\n${agent
            .output()
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

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
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
import { createClusterCa } from '@podmin/util-pki';

describe('podmin-agent --provider aws against the S3 and SSM emulator', () => {
  it('reads the index from S3, secrets and CAs from Parameter Store, publishes the workload CA bundle and keeps the log-export identity', async () => {
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
    // The log exporter's private server CA (setup --otel-logs ca=), in a bucket of its own.
    const exporterCa = (await createClusterCa('exporter', new Date())).certificate.pem;
    await s3.send(
      new PutObjectCommand({ Bucket: trustBucket, Key: 'otel/exporter-ca.pem', Body: exporterCa }),
    );
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
        PODMIN_OTEL_LOGS_MTLS: 'true',
        PODMIN_OTEL_LOGS_CA: `s3://${trustBucket}/otel/exporter-ca.pem`,
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
      // Log export: agent-identity keeps Fluent Bit's client leaf under the node root and
      // installs the ca= bundle; the host's systemd is not this node's, so no restart is tried.
      const telemetry = path.join(nodeRoot, 'run/podmin/telemetry');
      await waitFor(
        () =>
          fs.existsSync(path.join(telemetry, 'otel-logs/client.key')) &&
          fs.existsSync(path.join(telemetry, 'otel-logs-ca.pem'))
            ? true
            : undefined,
        'the log-export identity and CA bundle',
        20_000,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}; agent log:\n${agent.tail(20)}`);
      });
      expect(fs.statSync(path.join(telemetry, 'otel-logs/client.key')).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(path.join(telemetry, 'otel-logs-ca.pem'), 'utf8')).toBe(exporterCa);
      expect(agent.output()).toContain('skip log exporter restart');
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

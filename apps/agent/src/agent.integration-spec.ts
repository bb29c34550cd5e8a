import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { LocalSecretStore } from '@podmin/data-access-secrets';
import {
  commitDesiredState,
  daemonSetManifest,
  freeAgentPorts,
  freeLoopbackPort,
  localAgentArgs,
  seedClusterSecrets,
  spawnBuiltAgent,
  waitFor,
} from '@podmin/testing';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { podPayloadKey, serviceVip, servicePayloadKey } from '@podmin/util-desired-state';
import { readSnapshot } from '@podmin/agent-feature-coordinator';
import { buildDeployment } from '@podmin/util-manifest';
import { AGENT_SERVICE_PROCESSES } from './__fixtures__/local-node';

const MANIFEST = daemonSetManifest({ secret: 'db-url', servicePort: 443 });

describe('podmin-agent (built)', () => {
  let bucket: string;
  let secretsFile: string;
  beforeAll(async () => {
    bucket = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-agent-'));
    // What `podmin setup` stores create-only before the agent starts.
    secretsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-secrets-')), 'demo.json');
    const store = new LocalSecretStore({ file: secretsFile, provider: 'aws-parameter-store' });
    await seedClusterSecrets(store, 'demo', { '/demo/product/web/db-url': 'postgres://db' });
  });
  afterAll(() => fs.rmSync(bucket, { recursive: true, force: true }));

  /** Starts the agent for the local provider on `bucket`, listening on the ports given. */
  const runAgent = async (healthPort: number, registryPort: number, nodeRoot: string) => {
    // Own ports for DNS and coordination, so agents of concurrent tests never collide.
    const dnsPort = await freeLoopbackPort();
    const coordinationPort = await freeLoopbackPort();
    return {
      dnsPort,
      coordinationPort,
      ...spawnBuiltAgent({
        args: localAgentArgs(bucket),
        nodeRoot,
        ports: {
          health: healthPort,
          registry: registryPort,
          dns: dnsPort,
          coordination: coordinationPort,
        },
        env: { PODMIN_LOCAL_SECRETS_FILE: secretsFile },
      }),
    };
  };

  it('exits non-zero naming every bad flag', async () => {
    const { exited, output } = spawnBuiltAgent({
      args: [
        '--provider',
        'aws',
        '--bucket',
        'B',
        '--cluster',
        'Demo',
        '--ipv6-prefix',
        'fd00:1:2:3:4::/80',
      ],
    });
    expect(await exited).toBe(2);
    for (const flag of ['--bucket', '--region', '--cluster', '--nodegroup', '--ipv6-prefix'])
      expect(output()).toContain(`${flag}:`);
  });

  it('exits 2 naming the election rule when the lease leaves a leader no duty window', async () => {
    const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-node-'));
    const { exited, output } = spawnBuiltAgent({
      args: localAgentArgs(bucket),
      nodeRoot,
      ports: await freeAgentPorts(),
      env: {
        PODMIN_LOCAL_SECRETS_FILE: secretsFile,
        PODMIN_ELECTION_LEASE_MS: '6000',
        PODMIN_ELECTION_POLL_MS: '1000',
      },
    });
    try {
      expect(await exited).toBe(2);
      expect(output()).toContain(
        'PODMIN_ELECTION_LEASE_MS: a lease of 6000 ms with a poll (PODMIN_ELECTION_POLL_MS) of 1000 ms ' +
          'leaves a leader 3286 ms of duties before its next renew (lease − renew margin 1714 ms − poll); ' +
          'leader duties need at least 5000 ms: use a lease of at least 8400 ms',
      );
    } finally {
      fs.rmSync(nodeRoot, { recursive: true, force: true });
    }
  });

  it('supervises its services, publishes a static Pod with identity and secrets, restarts a crashed service and shuts down on SIGTERM', async () => {
    const [healthPort, registryPort] = await Promise.all([freeLoopbackPort(), freeLoopbackPort()]);
    const nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-node-'));
    const agent = await runAgent(healthPort, registryPort, nodeRoot);
    try {
      const ready = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
        return res.status === 200
          ? ((await res.json()) as { services: Array<{ name: string; pid: number }> })
          : undefined;
      }, 'readiness');
      expect((await fetch(`http://127.0.0.1:${registryPort}/v2/`)).status).toBe(200);
      const registryPid = ready.services.find((s) => s.name === 'registry')?.pid;
      expect(registryPid).toBeGreaterThan(0);

      process.kill(registryPid as number, 'SIGKILL');
      await waitFor(
        async () =>
          (await fetch(`http://127.0.0.1:${healthPort}/healthz`)).status === 503 ? true : undefined,
        'unhealthy after crash',
        5_000,
      );
      const restarted = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
        const body = (await res.json()) as {
          services: Array<{ name: string; pid: number; restarts: number }>;
        };
        const registry = body.services.find((s) => s.name === 'registry');
        return res.status === 200 && registry && registry.pid !== registryPid
          ? registry
          : undefined;
      }, 'restart');
      expect(restarted.restarts).toBe(1);

      // A committed deployment becomes a static Pod with its identity and secret files.
      const d = buildDeployment(MANIFEST, { source: 'test', name: 'web', nodegroup: 'default' });
      const objects = new LocalDirectoryObjectStore(bucket);
      const svc = servicePayloadKey('product', 'web', d.service!.yaml);
      await commitDesiredState(objects, { deploy: [d] });
      const manifestFile = path.join(nodeRoot, 'etc/podmin/manifests/web.yaml');
      const manifest = await waitFor(
        () =>
          Promise.resolve(
            fs.existsSync(manifestFile) ? fs.readFileSync(manifestFile, 'utf8') : undefined,
          ),
        'static Pod manifest',
      );
      expect(manifest).toMatch(/podmin\.dev\/identity-revision: [0-9a-f]{64}/);
      const identityDir = path.join(nodeRoot, 'run/podmin/workloads/web/identity');
      for (const f of ['tls.crt', 'tls.key', 'ca.crt'])
        expect(fs.statSync(path.join(identityDir, f)).mode & 0o777).toBe(0o444);
      execFileSync('openssl', [
        'verify',
        '-CAfile',
        path.join(identityDir, 'ca.crt'),
        path.join(identityDir, 'tls.crt'),
      ]);
      const text = execFileSync('openssl', [
        'x509',
        '-noout',
        '-ext',
        'subjectAltName',
        '-in',
        path.join(identityDir, 'tls.crt'),
      ]).toString();
      expect(text).toContain('URI:spiffe://demo.podmin.internal/ns/product/pod/web');
      expect(text).toContain('DNS:web.product.svc.cluster.local');
      const secretDirLine = /path: (\S+aws-parameter-store)/.exec(manifest)!;
      expect(fs.readFileSync(path.join(secretDirLine[1]!, 'db-url'), 'utf8')).toBe('postgres://db');

      // A lone node leads, writes the Service snapshot, and its agent-dns answers the VIP.
      const leader = JSON.parse(fs.readFileSync(path.join(bucket, 'dns/leader.json'), 'utf8')) as {
        leaderID: string;
        leaderAddr: string;
      };
      expect(leader).toMatchObject({
        leaderID: 'node-1',
        leaderAddr: `[::1]:${agent.coordinationPort}`,
      });
      const vip = serviceVip('demo', 'product', 'web');
      const answer = await waitFor(() => {
        const out = execFileSync('dig', [
          '+norecurse',
          '+noall',
          '+answer',
          '-p',
          String(agent.dnsPort),
          '@127.0.0.1',
          'web.product.svc.cluster.local',
          'AAAA',
        ]).toString();
        return out.includes(vip) ? out : undefined;
      }, 'agent-dns to answer the Service VIP');
      expect(answer).toMatch(
        new RegExp(`^web\\.product\\.svc\\.cluster\\.local\\.\\s+5\\s+IN\\s+AAAA\\s+${vip}`, 'm'),
      );
      const snapshot = await readSnapshot(objects, { cluster: 'demo' });
      expect(snapshot?.snapshot.services.map((s) => `${s.namespace}/${s.name}/${s.vip}`)).toEqual([
        `product/web/${vip}`,
      ]);

      // A corrupt payload makes the reconciler, and so the agent's /healthz, unhealthy.
      const bad = podPayloadKey('default', 'kind: Pod\n');
      await objects.put(bad, 'kind: Pod\n# tampered\n');
      await commitDesiredState(objects, { entries: { 'default/web': { pod: bad, service: svc } } });
      const unhealthy = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${healthPort}/healthz`);
        return res.status === 503
          ? ((await res.json()) as { services: Array<{ name: string; detail: string | null }> })
          : undefined;
      }, 'unhealthy reconciler');
      expect(unhealthy.services.find((s) => s.name === 'staticpod')?.detail).toContain(
        'not the digest in its path',
      );
      expect(fs.existsSync(manifestFile)).toBe(true);

      // Every process, the supervisor too, gives back the clean file pages of its start-up
      // (libs/agent/data-access-memory): each held tens of MiB of the node binary.
      const released = await waitFor(
        () => {
          const byService = new Map<string, Record<string, unknown>>();
          for (const l of agent.output().split('\n')) {
            if (!l.startsWith('{')) continue;
            const line = JSON.parse(l) as Record<string, unknown>;
            if (line['msg'] === 'release start-up pages')
              byService.set(String(line['service']), line);
          }
          return byService.size >= 7 ? byService : undefined;
        },
        'every agent process to release its start-up pages',
        40_000,
      );
      expect([...released.keys()].sort()).toEqual([...AGENT_SERVICE_PROCESSES, 'podmin-agent']);
      for (const line of released.values()) {
        expect(line['refused']).toBe(0);
        expect(Number(line['releasedKiB'])).toBeGreaterThan(10 * 1024);
      }

      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const lines = agent
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { msg: string; service?: string; slicedThreads?: number });
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining(['start agent', 'service ready', 'shut down', 'stopped']),
      );
      // agent-dns alone is given the short scheduler slice, and the agent says on how many threads.
      const sliced = lines
        .filter((l) => l.msg === 'service ready' && l.slicedThreads !== undefined)
        .map((l) => l.service);
      expect(sliced).toEqual(['dns']);
      expect(
        lines.find((l) => l.msg === 'service ready' && l.service === 'dns')?.slicedThreads,
      ).toBeGreaterThan(0);
      // Nothing is left listening.
      await expect(fetch(`http://127.0.0.1:${registryPort}/v2/`)).rejects.toThrow();
    } catch (err) {
      // Show what the agent said: a failure here is usually explained by its log.
      console.error(agent.output().split('\n').slice(-30).join('\n'));
      throw err;
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 120_000);
  it('takes its service processes down with it when killed outright', async () => {
    const [healthPort, registryPort] = await Promise.all([freeLoopbackPort(), freeLoopbackPort()]);
    const agent = await runAgent(
      healthPort,
      registryPort,
      fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-node-')),
    );
    // Every service started; /readyz itself stays 503 here, because the bucket still holds the
    // corrupt payload the previous test committed and this fresh node never published web.
    const ready = await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
      const body = (await res.json()) as { services: Array<{ pid: number; ready: boolean }> };
      return body.services.every((s) => s.ready && s.pid > 0) ? body : undefined;
    }, 'every service started');
    agent.child.kill('SIGKILL');
    await agent.exited;
    for (const { pid } of ready.services) {
      await waitFor(
        () => {
          try {
            process.kill(pid, 0);
            return Promise.resolve(undefined);
          } catch {
            return Promise.resolve(true);
          }
        },
        `service ${pid} to exit`,
        10_000,
      );
    }
  });
});

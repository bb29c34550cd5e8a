import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { LocalSecretStore } from '@podmin/data-access-secrets';
import { LocalDirectoryObjectStore } from '@podmin/data-access-object-store';
import { type BuiltAgent, commitDesiredState, daemonSetManifest, waitFor } from '@podmin/testing';
import { INDEX_KEY, parseIndex } from '@podmin/util-desired-state';
import { buildDeployment } from '@podmin/util-manifest';
import { makeEmulatorNode, startEmulatorAgent } from './__fixtures__/emulator-node';
import { makeLocalNode, startLocalAgent, type LocalNode } from './__fixtures__/local-node';
import { podFilesOf } from './__fixtures__/pod-files';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const manifest = (name: string, image: string, secret: string): string =>
  daemonSetManifest({ name, image, secret });

interface HealthBody {
  status: string;
  services: Array<{ name: string; healthy: boolean | null; detail: string | null }>;
}

/** The built agent against a local bucket, with every fault the issue found reproduced. */
describe('podmin-agent keeps what it has through desired-state faults (built, local provider)', () => {
  let node: LocalNode;
  let bucket: string;
  let nodeRoot: string;
  let secrets: LocalSecretStore;
  let objects: LocalDirectoryObjectStore;
  let agent: BuiltAgent;
  let healthPort: number;

  const manifests = () => path.join(nodeRoot, 'etc/podmin/manifests');
  const workloads = () => path.join(nodeRoot, 'run/podmin/workloads');
  const indexFile = () => path.join(bucket, INDEX_KEY);

  const nodeFiles = () => podFilesOf(nodeRoot);

  const health = async (endpoint: 'healthz' | 'readyz') => {
    const res = await fetch(`http://127.0.0.1:${healthPort}/${endpoint}`);
    return { status: res.status, body: (await res.json()) as HealthBody };
  };
  const staticpodDetail = (body: HealthBody) =>
    body.services.find((s) => s.name === 'staticpod')?.detail ?? '';

  /** Waits for /healthz and /readyz to be 503 with a staticpod detail matching `detail`. */
  async function expectUnhealthy(detail: RegExp): Promise<HealthBody> {
    const body = await waitFor(
      async () => {
        const h = await health('healthz');
        return h.status === 503 && detail.test(staticpodDetail(h.body)) ? h.body : undefined;
      },
      `/healthz 503 with a staticpod detail matching ${detail}`,
      20_000,
    );
    expect((await health('readyz')).status).toBe(503);
    return body;
  }

  /** Waits for /healthz and /readyz to be 200; returns the milliseconds it took. */
  async function expectHealthy(): Promise<number> {
    const started = Date.now();
    await waitFor(
      async () =>
        (await health('healthz')).status === 200 && (await health('readyz')).status === 200
          ? true
          : undefined,
      '/healthz and /readyz 200',
      40_000,
    );
    return Date.now() - started;
  }

  const deploy = (name: string, image: string, secret: string) =>
    commitDesiredState(objects, {
      deploy: [
        buildDeployment(manifest(name, image, secret), {
          source: 'test',
          name,
          nodegroup: 'default',
        }),
      ],
    });
  const podFile = (name: string) => path.join(manifests(), `${name}.yaml`);
  const podYaml = (name: string) =>
    fs.existsSync(podFile(name)) ? fs.readFileSync(podFile(name), 'utf8') : '';
  const podKeyOf = async (name: string) =>
    parseIndex((await objects.get(INDEX_KEY)).body)[`default/${name}`]!.pod;

  beforeAll(async () => {
    node = await makeLocalNode('podmin-faults', {
      '/demo/product/web/db-url': 'postgres://db',
      '/demo/product/api/token': 's3cr3t',
    });
    ({ bucket, nodeRoot, secrets } = node);
    // Like / on a node: every host user may traverse it, so only podmin's modes protect Pods.
    for (const dir of [node.dir, nodeRoot]) fs.chmodSync(dir, 0o755);
    objects = new LocalDirectoryObjectStore(bucket);
    await deploy('web', 'hello:v1', 'db-url');
    await deploy('api', 'hello:v1', 'token');

    const started = await startLocalAgent(node);
    agent = started.agent;
    healthPort = started.ports.health;
    await waitFor(
      () => (fs.existsSync(podFile('web')) && fs.existsSync(podFile('api')) ? true : undefined),
      'both static Pods',
    );
    await expectHealthy();
  }, 90_000);

  // Each fault starts from a converged node, whatever the previous test left behind.
  beforeEach(async () => {
    await waitFor(
      () =>
        Object.keys(nodeFiles()).filter((f) => f.endsWith('tls.key')).length === 2
          ? true
          : undefined,
      'both Pods with their identities',
    );
    await expectHealthy();
  }, 60_000);

  afterEach(() => {
    const state = expect.getState();
    if (state.assertionCalls !== state.numPassingAsserts)
      // A failure here is usually explained by what the agent logged last.
      process.stderr.write(agent.tail(25) + '\n');
  });

  afterAll(async () => {
    await agent.stop();
    node.cleanup();
  });

  /** Runs `fault`, checks the node kept every file and reports it, undoes it, checks recovery. */
  async function keepsThrough(
    fault: () => void,
    detail: RegExp,
    undo: () => void,
  ): Promise<number> {
    const before = nodeFiles();
    expect(Object.keys(before).some((f) => f.endsWith('tls.key'))).toBe(true);
    fault();
    try {
      // Longer than one poll interval: whatever the agent does about the fault, it has done it.
      await sleep(7_000);
      expect(nodeFiles()).toEqual(before);
      await expectUnhealthy(detail);
      await sleep(6_000);
      expect(nodeFiles()).toEqual(before);
    } finally {
      undo();
    }
    const tookMs = await expectHealthy();
    // The same manifests, identities (not reissued) and secrets.
    expect(nodeFiles()).toEqual(before);
    process.stderr.write(`converged ${tookMs} ms after the fault was undone (${String(detail)})\n`);
    return tookMs;
  }

  it('keeps manifests, identities and secrets while the index is moved away, and reissues nothing when it returns', async () => {
    const aside = path.join(bucket, 'index.json.aside');
    await keepsThrough(
      () => fs.renameSync(indexFile(), aside),
      /index.*(disappeared|missing)/,
      () => fs.renameSync(aside, indexFile()),
    );
  }, 90_000);

  it('keeps everything while a directory stands at the index key', async () => {
    const aside = path.join(bucket, 'index.json.aside');
    await keepsThrough(
      () => {
        fs.renameSync(indexFile(), aside);
        fs.mkdirSync(indexFile());
      },
      /deployments\/index\.json/,
      () => {
        fs.rmdirSync(indexFile());
        fs.renameSync(aside, indexFile());
      },
    );
  }, 90_000);

  it('keeps everything while the index is garbage', async () => {
    const original = fs.readFileSync(indexFile());
    await keepsThrough(
      () => fs.writeFileSync(indexFile(), '\u0000garbage{{{'),
      /index/,
      () => fs.writeFileSync(indexFile(), original),
    );
  }, 90_000);

  it('isolates a deployment whose payload is missing or corrupt: the others converge within one poll', async () => {
    const webV1 = podYaml('web');
    await deploy('web', 'hello:v2', 'db-url');
    const webKey = await podKeyOf('web');
    const webPayload = path.join(bucket, webKey);
    const good = fs.readFileSync(webPayload);
    fs.rmSync(webPayload);
    try {
      await brokenWebPayload(webV1, webPayload, good);
    } finally {
      fs.writeFileSync(webPayload, good);
    }
    const tookMs = await expectHealthy();
    expect(podYaml('web')).toContain('hello:v2');
    process.stderr.write(`web converged ${tookMs} ms after its payload was repaired\n`);
  }, 90_000);

  /** With web's v2 payload missing: api converges, web keeps v1; then the same with it corrupt. */
  async function brokenWebPayload(webV1: string, webPayload: string, good: Buffer): Promise<void> {
    const started = Date.now();
    await deploy('api', 'hello:v2', 'token');
    await waitFor(
      () => (podYaml('api').includes('hello:v2') ? true : undefined),
      'api to converge while web is broken',
      7_000,
    );
    process.stderr.write(`api converged ${Date.now() - started} ms after its deploy\n`);
    const body = await expectUnhealthy(/default\/web/);
    expect(staticpodDetail(body)).not.toContain('default/api');
    expect(podYaml('web')).toBe(webV1);

    // Corrupt instead of missing: still isolated, still the v1 Pod.
    fs.writeFileSync(webPayload, Buffer.concat([good, Buffer.from('# tampered\n')]));
    await deploy('api', 'hello:v3', 'token');
    await waitFor(
      () => (podYaml('api').includes('hello:v3') ? true : undefined),
      'api to converge while web is corrupt',
      7_000,
    );
    await expectUnhealthy(/default\/web.*not the digest/);
    expect(podYaml('web')).toBe(webV1);
  }

  it('isolates a deployment whose secret does not exist', async () => {
    const webBefore = podYaml('web');
    await deploy('web', 'hello:v4', 'missing-key');
    await deploy('api', 'hello:v4', 'token');
    try {
      await waitFor(
        () => (podYaml('api').includes('hello:v4') ? true : undefined),
        'api to converge while web lacks its secret',
        7_000,
      );
      const body = await expectUnhealthy(/default\/web/);
      expect(staticpodDetail(body)).toContain('missing-key');
      expect(podYaml('web')).toBe(webBefore);
    } finally {
      await secrets.create('/demo/product/web/missing-key', Buffer.from('late'));
    }
    const tookMs = await expectHealthy();
    expect(podYaml('web')).toContain('hello:v4');
    process.stderr.write(`web converged ${tookMs} ms after its secret was created\n`);
  }, 90_000);

  it("keeps every Pod's files private on the host, owned as the Pod runs, and readable in its mount", async () => {
    // As on a node, where /run and the /run/podmin tmpfs are 0755: only the modes podmin gives
    // the workloads subtree may keep other host users out.
    for (const dir of ['run', 'run/podmin']) fs.chmodSync(path.join(nodeRoot, dir), 0o755);
    await secrets.create('/demo/product/priv/key', Buffer.from('private value'));
    const priv = manifest('priv', 'hello:v1', 'key').replace(
      '    spec:\n',
      '    spec:\n      securityContext: { runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000 }\n',
    );
    await commitDesiredState(objects, {
      deploy: [buildDeployment(priv, { source: 'test', name: 'priv', nodegroup: 'default' })],
    });
    const privDir = path.join(workloads(), 'priv');
    await waitFor(
      () =>
        fs.existsSync(podFile('priv')) && fs.existsSync(path.join(privDir, 'identity', 'tls.key'))
          ? true
          : undefined,
      'the priv Pod and its identity',
    );
    const nobody = (...command: string[]) =>
      execFileSync(
        'setpriv',
        ['--reuid', '65534', '--regid', '65534', '--clear-groups', ...command],
        {
          stdio: 'pipe',
        },
      );
    const secretFile = /path: (\S+aws-parameter-store)/.exec(podYaml('web'))![1]!;
    // Another host user can neither list the Pods nor read any Pod's key or secret.
    for (const target of [
      ['ls', workloads()],
      ['ls', path.join(workloads(), 'web')],
      ['cat', path.join(workloads(), 'web', 'identity', 'tls.key')],
      ['cat', path.join(secretFile, 'db-url')],
      ['cat', path.join(privDir, 'identity', 'tls.key')],
    ])
      expect(() => nobody(...target)).toThrow(/Permission denied/);
    expect(fs.statSync(workloads()).mode & 0o777).toBe(0o700);
    expect(fs.statSync(privDir).mode & 0o777).toBe(0o700);
    // Inside the Pod the files stay 0444, owned by the user and fsGroup it declares.
    const key = fs.statSync(path.join(privDir, 'identity', 'tls.key'));
    expect({ mode: key.mode & 0o777, uid: key.uid, gid: key.gid }).toEqual({
      mode: 0o444,
      uid: 1000,
      gid: 2000,
    });
    // The container reaches its files through a bind mount of the directory: as its user it reads them.
    const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-mount-'));
    fs.chmodSync(mountPoint, 0o755);
    try {
      const read = execFileSync('unshare', [
        '--mount',
        'sh',
        '-c',
        'mount --bind "$1" "$2" && setpriv --reuid 1000 --regid 2000 --clear-groups cat "$2/tls.key"',
        'sh',
        fs.realpathSync(path.join(privDir, 'identity')),
        mountPoint,
      ]).toString();
      expect(read).toContain('PRIVATE KEY');
    } finally {
      fs.rmSync(mountPoint, { recursive: true, force: true });
    }
  }, 60_000);
});

/** A 403 AccessDenied the way S3 answers one (the SDK reads the code from this body). */
const ACCESS_DENIED_XML =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code>' +
  '<Message>Access Denied</Message><RequestId>podmin-test</RequestId></Error>';

/**
 * A loopback proxy in front of the S3 emulator that answers 403 AccessDenied for one key while
 * `deny` is set (moto enforces no bucket policy or IAM denial unless every request is signed by
 * an IAM user it knows, which the agent's credentials are not). Everything else is forwarded.
 */
async function deniedKeyProxy(
  emulator: string,
  bucket: string,
  key: string,
): Promise<{ endpoint: string; deny: boolean; denied: number; close: () => Promise<void> }> {
  const target = new URL(emulator);
  const state = {
    endpoint: '',
    deny: false,
    denied: 0,
    close: (): Promise<void> => Promise.resolve(),
  };
  const server = http.createServer((req, res) => {
    const keyPath = (req.url ?? '/').split('?')[0];
    if (state.deny && keyPath === `/${bucket}/${key}`) {
      state.denied++;
      req.resume();
      res.writeHead(403, { 'Content-Type': 'application/xml' });
      res.end(req.method === 'HEAD' ? undefined : ACCESS_DENIED_XML);
      return;
    }
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return state;
}

describe('podmin-agent keeps what it has while S3 denies the index (built, S3 emulator)', () => {
  let nodeRoot: string;
  let agent: BuiltAgent | undefined;
  let proxy: Awaited<ReturnType<typeof deniedKeyProxy>> | undefined;

  afterEach(async () => {
    const state = expect.getState();
    if (agent !== undefined && state.assertionCalls !== state.numPassingAsserts)
      process.stderr.write(agent.tail(25) + '\n');
    await agent?.stop();
    await proxy?.close();
    fs.rmSync(nodeRoot, { recursive: true, force: true });
  });

  it('keeps its Pods and reports access denied while reads of the index are refused, then converges', async () => {
    const aws = await makeEmulatorNode('podmin-denied', (cluster) => ({
      [`/${cluster}/product/web/db-url`]: 'postgres://db',
    }));
    await commitDesiredState(aws.objects, {
      deploy: [
        buildDeployment(manifest('web', 'hello:v1', 'db-url'), {
          source: 'test',
          name: 'web',
          nodegroup: 'default',
        }),
      ],
    });

    proxy = await deniedKeyProxy(aws.emulator.endpoint, aws.bucket, INDEX_KEY);
    nodeRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'podmin-denied-node-'));
    // S3 through the proxy; Parameter Store straight to the emulator.
    const running = await startEmulatorAgent(aws, nodeRoot, {
      AWS_ENDPOINT_URL_S3: proxy.endpoint,
    });
    agent = running.agent;
    const { health } = running.ports;
    const healthOf = async (endpoint: 'healthz' | 'readyz') => {
      const res = await fetch(`http://127.0.0.1:${health}/${endpoint}`);
      return { status: res.status, body: (await res.json()) as HealthBody };
    };
    const healthy = async () =>
      (await healthOf('healthz')).status === 200 && (await healthOf('readyz')).status === 200
        ? true
        : undefined;
    await waitFor(
      () =>
        Object.keys(podFilesOf(nodeRoot)).some((f) => f.endsWith('tls.key')) ? true : undefined,
      'the web Pod with its identity',
      60_000,
    ).catch((err: unknown) => {
      // What the agent said explains a failed start.
      process.stderr.write(`${agent?.tail(30) ?? ''}\n`);
      throw err;
    });
    await waitFor(healthy, '/healthz and /readyz 200', 40_000);
    const before = podFilesOf(nodeRoot);
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['etc/podmin/manifests/web.yaml']));

    proxy.deny = true;
    try {
      // Longer than one poll interval: whatever the agent does about the denial, it has done it.
      await sleep(7_000);
      expect(proxy.denied).toBeGreaterThan(0);
      expect(podFilesOf(nodeRoot)).toEqual(before);
      const body = await waitFor(
        async () => {
          const h = await healthOf('healthz');
          const detail = h.body.services.find((s) => s.name === 'staticpod')?.detail ?? '';
          return h.status === 503 && /access denied/i.test(detail) ? h.body : undefined;
        },
        '/healthz 503 with a staticpod detail naming access denied',
        20_000,
      );
      expect(body.status).not.toBe('ok');
      expect((await healthOf('readyz')).status).toBe(503);
      await sleep(6_000);
      expect(podFilesOf(nodeRoot)).toEqual(before);
    } finally {
      proxy.deny = false;
    }
    const started = Date.now();
    await waitFor(healthy, '/healthz and /readyz 200 after access returns', 40_000);
    // The same manifest, identity (not reissued) and secret.
    expect(podFilesOf(nodeRoot)).toEqual(before);
    process.stderr.write(`converged ${Date.now() - started} ms after S3 access returned\n`);
  }, 150_000);
});

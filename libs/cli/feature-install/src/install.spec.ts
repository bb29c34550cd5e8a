import type { IndexSigning } from '@podmin/data-access-desired-state';
import type { SecretProviderName } from '@podmin/data-access-secrets';
import { CLOUDFLARED_IMAGE, type PinnedImage } from '@podmin/util-dependencies';
import { PodminError, ValidationError } from '@podmin/util-errors';
import { parsePodPayload, recognizedOrigin } from '@podmin/util-manifest';
import { installComponent } from './install';
import type {
  InstallDeps,
  InstallPayloads,
  MirroredImage,
  PinnedImageMirror,
  TokenSecretStore,
} from './install.ports';

/** A secret store answering `exists` from a set of names, recording each question. */
class FakeTokenStore implements TokenSecretStore {
  readonly asked: string[] = [];
  constructor(
    readonly provider: SecretProviderName,
    private readonly names: ReadonlySet<string>,
  ) {}
  exists(name: string): Promise<boolean> {
    this.asked.push(name);
    return Promise.resolve(this.names.has(name));
  }
}

/** A mirror recording what it was asked to publish, answering a fixed outcome or failing. */
class FakeMirror implements PinnedImageMirror {
  readonly images: MirroredImage[] = [];
  failure: Error | undefined;
  constructor(private readonly outcome: 'present' | 'repaired' | 'uploaded' = 'uploaded') {}
  ensureMirrored(image: MirroredImage): Promise<'present' | 'repaired' | 'uploaded'> {
    this.images.push(image);
    return this.failure ? Promise.reject(this.failure) : Promise.resolve(this.outcome);
  }
}

const TOKEN = '/demo/platform-cloudflared/cloudflared/tunnel-token';
const STAND_IN: PinnedImage = {
  ...CLOUDFLARED_IMAGE,
  version: '9.9.9',
  digest: `sha256:${'c'.repeat(64)}`,
};

function setup(
  options: { token?: boolean; provider?: SecretProviderName; mirror?: FakeMirror } = {},
) {
  const secrets = new FakeTokenStore(
    options.provider ?? 'aws-parameter-store',
    new Set(options.token === false ? [] : [TOKEN]),
  );
  const mirror = options.mirror ?? new FakeMirror();
  const commits: InstallPayloads[] = [];
  const commitOptions: Array<{ signing?: IndexSigning }> = [];
  const calls: string[] = [];
  const info: string[] = [];
  const deps: InstallDeps = {
    reporter: { info: (m) => info.push(m) },
    cluster: 'demo',
    secrets: {
      provider: secrets.provider,
      exists: (name) => {
        calls.push('exists');
        return secrets.exists(name);
      },
    },
    mirror: {
      ensureMirrored: (image) => {
        calls.push('mirror');
        return mirror.ensureMirrored(image);
      },
    },
    commit: (payloads, commitOptionsOfCall) => {
      calls.push('commit');
      commits.push(payloads);
      commitOptions.push(commitOptionsOfCall);
      return Promise.resolve({ key: `${payloads.nodegroup}/${payloads.name}`, changed: true });
    },
  };
  return { deps, secrets, mirror, commits, commitOptions, calls, info };
}

async function rejection(promise: Promise<unknown>): Promise<PodminError> {
  const err: unknown = await promise.then(
    () => new Error('expected a rejection'),
    (e: unknown) => e,
  );
  if (!(err instanceof PodminError)) throw err;
  return err;
}

describe('installComponent', () => {
  it('refuses any other component, naming cloudflared, before touching anything', async () => {
    const { deps, calls } = setup();
    const err = await rejection(installComponent(deps, { component: 'foo', nodegroup: 'default' }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toContain('"foo"');
    expect(err.message).toContain('podmin installs only cloudflared');
    expect(calls).toEqual([]);
  });

  it('checks the NodeGroup name as deploy does, before touching anything', async () => {
    const { deps, calls } = setup();
    for (const bad of ['Workers', 'a_b', '', '-x', 'x'.repeat(64)]) {
      const err = await rejection(
        installComponent(deps, { component: 'cloudflared', nodegroup: bad }),
      );
      expect(err).toBeInstanceOf(ValidationError);
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect((err as ValidationError).problems[0]?.field).toBe('--nodegroup');
    }
    expect(calls).toEqual([]);
  });

  it('stops before mirroring or committing when the token is missing, with the exact fix', async () => {
    const { deps, calls, secrets } = setup({ token: false, provider: 'aws-secrets-manager' });
    const err = await rejection(
      installComponent(deps, { component: 'cloudflared', nodegroup: 'edge' }),
    );
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toContain(`${TOKEN} does not exist in aws-secrets-manager`);
    expect(err.hint).toContain(
      'podmin secret create tunnel-token --for cloudflared -n platform-cloudflared --provider aws-secrets-manager',
    );
    expect(secrets.asked).toEqual([TOKEN]);
    expect(calls).toEqual(['exists']);
  });

  it('commits with the signer it was given, and unsigned without one', async () => {
    const signing: IndexSigning = {
      cluster: 'demo',
      signer: {
        signer: 'ci',
        algorithm: 'ed25519',
        sign: () => Promise.reject(new Error('the commit port signs, not the install')),
      },
    };
    const signed = setup();
    await installComponent(signed.deps, { component: 'cloudflared', nodegroup: 'edge', signing });
    expect(signed.commitOptions).toEqual([{ signing }]);
    const unsigned = setup();
    await installComponent(unsigned.deps, { component: 'cloudflared', nodegroup: 'edge' });
    expect(unsigned.commitOptions).toEqual([{}]);
  });

  it('mirrors the real pin by default, then commits the hardened Pod to the NodeGroup', async () => {
    const { deps, calls, mirror, commits } = setup();
    const result = await installComponent(deps, { component: 'cloudflared', nodegroup: 'edge' });
    expect(calls).toEqual(['exists', 'mirror', 'commit']);
    expect(mirror.images).toEqual([
      {
        source: 'docker.io/cloudflare/cloudflared:2026.8.2',
        version: '2026.8.2',
        path: 'mirror/docker.io/cloudflare/cloudflared',
        digest: CLOUDFLARED_IMAGE.digest,
      },
    ]);
    expect(result).toMatchObject({ key: 'edge/cloudflared', changed: true, mirror: 'uploaded' });
    expect(result.image).toBe(
      `registry.podmin.internal/mirror/docker.io/cloudflare/cloudflared@${CLOUDFLARED_IMAGE.digest}`,
    );
    expect(commits).toHaveLength(1);
    expect(commits[0]).toMatchObject({ name: 'cloudflared', nodegroup: 'edge' });

    // The committed payload passes the agent's own read-side check.
    const payload = parsePodPayload(commits[0]?.podYaml ?? '', 'pod');
    expect(payload).toMatchObject({ name: 'cloudflared', namespace: 'platform-cloudflared' });
    const pod = payload.pod as unknown as {
      metadata: { name: string; namespace: string; annotations: Record<string, string> };
      spec: {
        nodeSelector?: unknown;
        securityContext: Record<string, unknown>;
        containers: Array<Record<string, unknown>>;
        volumes: Array<{ name: string }>;
      };
    };
    expect(pod.metadata).toMatchObject({ name: 'cloudflared', namespace: 'platform-cloudflared' });
    expect(recognizedOrigin(pod)).toBe('install/cloudflared');
    expect(pod.metadata.annotations['podmin.dev/aws-parameter-store']).toBe('tunnel-token');
    expect(pod.spec.nodeSelector).toBeUndefined();
    expect(pod.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    const container = pod.spec.containers[0] ?? {};
    expect(container).toMatchObject({
      name: 'cloudflared',
      image: result.image,
      imagePullPolicy: 'IfNotPresent',
      command: ['/usr/local/bin/cloudflared'],
      args: [
        'tunnel',
        '--no-autoupdate',
        '--metrics',
        '0.0.0.0:2000',
        'run',
        '--token-file',
        '/var/run/podmin/aws-parameter-store/tunnel-token',
      ],
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65532,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      },
      livenessProbe: { httpGet: { path: '/ready', port: 2000 } },
      resources: { limits: { cpu: '500m', memory: '256Mi' } },
    });
    // The normal workload identity mount is added like for any deployment.
    expect(pod.spec.volumes.map((v) => v.name)).toContain('podmin-workload-identity');
  });

  it('mounts the token from Secrets Manager when that is the provider', async () => {
    const { deps, commits } = setup({ provider: 'aws-secrets-manager' });
    await installComponent(deps, { component: 'cloudflared', nodegroup: 'edge' });
    const yaml = commits[0]?.podYaml ?? '';
    expect(yaml).toContain('podmin.dev/aws-secrets-manager: tunnel-token');
    expect(yaml).toContain('/var/run/podmin/aws-secrets-manager/tunnel-token');
    expect(yaml).not.toContain('aws-parameter-store');
  });

  it('renders identical payload bytes every time, and a given pin names its image by digest', async () => {
    const first = setup();
    const second = setup({ mirror: new FakeMirror('present') });
    await installComponent(first.deps, { component: 'cloudflared', nodegroup: 'edge' });
    const again = await installComponent(second.deps, {
      component: 'cloudflared',
      nodegroup: 'edge',
      image: STAND_IN,
    });
    expect(again.mirror).toBe('present');
    expect(
      second.info.some((m) => m.includes('Reusing mirror/docker.io/cloudflare/cloudflared')),
    ).toBe(true);
    expect(again.image).toBe(
      `registry.podmin.internal/mirror/docker.io/cloudflare/cloudflared@${STAND_IN.digest}`,
    );
    const repeat = setup();
    await installComponent(repeat.deps, { component: 'cloudflared', nodegroup: 'edge' });
    expect(repeat.commits[0]?.podYaml).toBe(first.commits[0]?.podYaml);
  });

  it('commits nothing when the mirror refuses the upstream, keeping its code and cause', async () => {
    const mirror = new FakeMirror();
    mirror.failure = new PodminError('IO_ERROR', 'manifest hashes to sha256:bad');
    const { deps, calls } = setup({ mirror });
    const err = await rejection(
      installComponent(deps, { component: 'cloudflared', nodegroup: 'edge' }),
    );
    expect(err.code).toBe('IO_ERROR');
    expect(err.message).toContain(
      `mirroring the pinned image docker.io/cloudflare/cloudflared:2026.8.2@${CLOUDFLARED_IMAGE.digest}: manifest hashes to sha256:bad`,
    );
    expect(err.cause).toBe(mirror.failure);
    expect(calls).toEqual(['exists', 'mirror']);
  });
});

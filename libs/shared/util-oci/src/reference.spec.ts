import {
  clusterDestination,
  clusterRepositoryProblem,
  formatReference,
  mirrorReference,
  parseClusterReference,
  parseReference,
  parseSourceReference,
  repositoryPrefix,
} from './reference';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const fmt = (ref: Parameters<typeof formatReference>[0]) => formatReference(ref);

describe('parseReference', () => {
  it('splits host, port, path, tag and digest', () => {
    expect(parseReference(`localhost:5000/a/b:v1@${DIGEST}`)).toEqual({
      registry: 'localhost:5000',
      repository: 'a/b',
      tag: 'v1',
      digest: DIGEST,
    });
    expect(parseReference('nginx')).toEqual({
      registry: undefined,
      repository: 'nginx',
      tag: undefined,
      digest: undefined,
    });
    expect(parseReference('acme/web:1.0').registry).toBeUndefined();
    expect(parseReference('[::1]:5000/x').registry).toBe('[::1]:5000');
    expect(parseReference('Example/x').registry).toBe('Example');
  });

  it('rejects what the distribution grammar rejects', () => {
    for (const bad of [
      '',
      'UPPER',
      'a//b',
      'a/../b',
      'a:',
      'a:-x',
      'a@sha256:1',
      'host.io/',
      '-a',
      'a__-b',
      `a:${'t'.repeat(129)}`,
      `${'a'.repeat(256)}`,
    ]) {
      expect(() => parseReference(bad)).toThrow(/parsing image reference/);
    }
  });
});

describe('source references', () => {
  it('applies Docker Hub defaults', () => {
    expect(fmt(parseSourceReference('nginx'))).toBe('docker.io/library/nginx:latest');
    expect(fmt(parseSourceReference('index.docker.io/acme/web'))).toBe('docker.io/acme/web:latest');
    expect(fmt(parseSourceReference(`nginx@${DIGEST}`))).toBe(`docker.io/library/nginx@${DIGEST}`);
    expect(fmt(parseSourceReference('ghcr.io/acme/web:v1'))).toBe('ghcr.io/acme/web:v1');
  });
});

describe('cluster references', () => {
  it('resolves shorthand beneath apps/', () => {
    expect(fmt(parseClusterReference('hello'))).toBe('registry.podmin.internal/apps/hello');
    expect(fmt(parseClusterReference('hello:v1'))).toBe('registry.podmin.internal/apps/hello:v1');
    expect(
      fmt(parseClusterReference('registry.podmin.internal/mirror/registry.k8s.io/pause:3.10')),
    ).toBe('registry.podmin.internal/mirror/registry.k8s.io/pause:3.10');
    expect(() => parseClusterReference('ghcr.io/acme/web:v1')).toThrow(/not the cluster registry/);
    expect(() => parseClusterReference('registry.podmin.internal/other/x')).toThrow(
      /not beneath apps/,
    );
  });

  it('maps a push source to a destination beneath apps/', () => {
    expect(fmt(clusterDestination('ghcr.io/acme/web:v1'))).toBe(
      'registry.podmin.internal/apps/acme/web:v1',
    );
    expect(fmt(clusterDestination('docker.io/library/nginx:1'))).toBe(
      'registry.podmin.internal/apps/library/nginx:1',
    );
    expect(fmt(clusterDestination('nginx'))).toBe(
      'registry.podmin.internal/apps/library/nginx:latest',
    );
    expect(fmt(clusterDestination('localhost:5000/x/y:z'))).toBe(
      'registry.podmin.internal/apps/x/y:z',
    );
    expect(fmt(clusterDestination('registry.podmin.internal/apps/hello:v1'))).toBe(
      'registry.podmin.internal/apps/hello:v1',
    );
    expect(fmt(clusterDestination('ghcr.io/acme/web:v1', 'hello:v2'))).toBe(
      'registry.podmin.internal/apps/hello:v2',
    );
    expect(() => clusterDestination('x', 'registry.podmin.internal/mirror/docker.io/x')).toThrow(
      /reserved/,
    );
  });

  it('names mirror repositories after their upstream registry', () => {
    expect(fmt(mirrorReference('registry.k8s.io/pause:3.10'))).toBe(
      'registry.podmin.internal/mirror/registry.k8s.io/pause:3.10',
    );
    expect(() => mirrorReference('localhost:5000/x')).toThrow(/cannot be a repository component/);
  });

  it('checks repository names and gives their bucket prefix', () => {
    expect(clusterRepositoryProblem('apps/demo/hello')).toBeUndefined();
    expect(clusterRepositoryProblem('mirror/docker.io/library/nginx')).toBeUndefined();
    expect(clusterRepositoryProblem('apps')?.kind).toBe('outside');
    expect(clusterRepositoryProblem('mirror/docker.io')?.kind).toBe('outside');
    expect(clusterRepositoryProblem('deployments/x')?.kind).toBe('outside');
    expect(clusterRepositoryProblem('apps/../x')?.kind).toBe('invalid');
    expect(clusterRepositoryProblem('apps/%2e%2e/x')?.kind).toBe('invalid');
    expect(repositoryPrefix('apps/acme/web')).toBe('apps/acme/web/');
    expect(() => repositoryPrefix('tfstate/x')).toThrow(/bucket prefix/);
  });
});

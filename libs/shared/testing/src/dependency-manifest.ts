import {
  FILE_DEPENDENCIES,
  OTEL_LOGS_DEPENDENCIES,
  dependencyObjectKey,
  type Arch,
  type DependencyManifest,
} from '@podmin/util-dependencies';

/** What a test varies in {@link dependencyManifest}. */
export interface TestDependencyManifest {
  /** With the log export packages (`OTEL_LOGS_DEPENDENCIES`) after the canonical set. */
  otel?: boolean;
  /** Versions by dependency name; `1.<index>.0` for the others. */
  versions?: Readonly<Record<string, string>>;
  /** Digests by dependency name; `sha512:` and the index's last digit 128 times for the others. */
  digests?: Readonly<Record<string, string>>;
}

/**
 * A complete published dependency manifest for both architectures: every file dependency (the
 * `index`-th is `size` 1000 + index) and the pause image.
 */
export function dependencyManifest(options: TestDependencyManifest = {}): DependencyManifest {
  const m: DependencyManifest = { version: 1, dependencies: {}, images: {} };
  const deps = [...FILE_DEPENDENCIES, ...(options.otel ? OTEL_LOGS_DEPENDENCIES : [])];
  deps.forEach((dep, i) => {
    const version = options.versions?.[dep.name] ?? `1.${i}.0`;
    for (const arch of ['amd64', 'arm64'] as Arch[]) {
      (m.dependencies[dep.name] ??= {})[arch] = {
        version,
        url: `https://example.test/${dep.name}/${arch}`,
        path: dependencyObjectKey(dep, version, arch),
        digest: options.digests?.[dep.name] ?? `sha512:${String(i % 10).repeat(128)}`,
        size: 1000 + i,
      };
    }
  });
  m.images['pause'] = {
    version: '3.10.1',
    source: 'registry.k8s.io/pause:3.10.1',
    path: 'mirror/registry.k8s.io/pause',
    digest: `sha256:${'3'.repeat(64)}`,
    size: 1090874,
  };
  return m;
}
